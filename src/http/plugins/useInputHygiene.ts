import { isUtf8 } from 'node:buffer'
import { GraphQLError, visit, type DocumentNode, type ExecutionArgs } from 'graphql'
import type { Plugin } from 'graphql-yoga'
import { badInput } from '../../domain/core/index.ts'
import { findInJson } from '../../lib/jsonWalk.ts'

/**
 * PostgreSQL refuses NUL in text (22021) and in jsonb (22P05), and UTF-8 cannot encode an unpaired
 * surrogate (node-postgres would store U+FFFD in its place without saying so).
 */
const UNSTORABLE = /\0|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

export const isStorable = (s: string): boolean => !UNSTORABLE.test(s)

const UNSTORABLE_MESSAGE = 'contains a character that cannot be stored (NUL, U+0000, or an unpaired UTF-16 surrogate)'

/** A 400 before anything runs, the same for GET and POST. */
const badRequest = (message: string) =>
  new GraphQLError(message, { extensions: { code: 'BAD_USER_INPUT', http: { status: 400 } } })

const isJsonType = (request: Request) => {
  const type = request.headers.get('content-type')?.split(',')[0]?.split(';')[0]?.trim()
  return type === 'application/json' || type === 'application/graphql+json'
}

/** The body's text, refused unless it is valid UTF-8: decoding would replace bad bytes with U+FFFD unseen. */
async function utf8Body(request: Request): Promise<string> {
  const bytes = new Uint8Array(await request.arrayBuffer())
  if (!isUtf8(bytes)) throw badRequest('the request body is not valid UTF-8')
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8')
}

function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    throw badRequest(`${what} is not valid JSON`)
  }
}

/** GET parameters: percent-encoded bytes must be UTF-8, `variables` and `extensions` JSON (Yoga's parser throws a bare SyntaxError). */
function parseGet(request: Request) {
  const search = new URL(request.url).search.slice(1)
  for (const part of search.split('&')) {
    try {
      decodeURIComponent(part.replace(/\+/g, ' '))
    } catch {
      throw badRequest('the query string is not valid percent-encoded UTF-8')
    }
  }
  const params = new URLSearchParams(search)
  const json = (name: string) => {
    const value = params.get(name)
    return value ? parseJson(value, `the ${name} parameter`) : undefined
  }
  return {
    query: params.get('query') ?? undefined,
    operationName: params.get('operationName') ?? undefined,
    variables: json('variables'),
    extensions: json('extensions'),
  }
}

async function parsePost(request: Request, original: (request: Request) => unknown, RequestClass: typeof Request) {
  const text = await utf8Body(request)
  if (!isJsonType(request))
    return original(new RequestClass(request.url, { method: request.method, headers: request.headers, body: text }))
  const body = parseJson(text, 'the request body')
  if (typeof body !== 'object' || body === null) throw badRequest('the request body must be a JSON object')
  return body
}

const literalChecked = new WeakMap<DocumentNode, boolean>()

/** Whether a string literal of the document cannot be stored, once per document. */
function hasUnstorableLiteral(document: DocumentNode): boolean {
  let found = literalChecked.get(document)
  if (found !== undefined) return found
  found = false
  visit(document, {
    StringValue(node) {
      if (!isStorable(node.value)) found = true
    },
  })
  literalChecked.set(document, found)
  return found
}

/** BAD_USER_INPUT for the first variable or literal string (or object key) that cannot be stored, else null. */
function unstorableInput(args: Pick<ExecutionArgs, 'document' | 'variableValues'>): GraphQLError | null {
  if (hasUnstorableLiteral(args.document)) return badInput(`a string literal in the document ${UNSTORABLE_MESSAGE}`)
  const path = args.variableValues
    ? findInJson(args.variableValues, (value) => typeof value === 'string' && !isStorable(value))
    : null
  if (!path) return null
  const field = path.map((step) => (typeof step === 'string' && !isStorable(step) ? '<key>' : step)).join('.')
  return badInput(`variable ${field} ${UNSTORABLE_MESSAGE}`, field)
}

/**
 * Input hygiene at the edge, one place for every operation over HTTP and graphql-ws: a body that is
 * not UTF-8 or not JSON, or GET parameters that are not, answer 400 before parsing; a string that
 * PostgreSQL cannot store, anywhere in the variables or the document, answers BAD_USER_INPUT
 * before any resolver runs. New string inputs are covered without a check of their own.
 */
export function useInputHygiene(): Plugin {
  return {
    onRequestParse({ requestParser: original, setRequestParser, fetchAPI }) {
      // No parser chosen: Yoga answers 415 as before.
      if (!original) return
      setRequestParser(
        (req) =>
          (req.method === 'GET' ? parseGet(req) : parsePost(req, original, fetchAPI.Request)) as ReturnType<
            typeof original
          >,
      )
    },
    onExecute({ args, setResultAndStopExecution }) {
      const error = unstorableInput(args)
      if (error) setResultAndStopExecution({ errors: [error] })
    },
    onSubscribe({ args, setResultAndStopExecution }) {
      const error = unstorableInput(args)
      if (error) setResultAndStopExecution({ errors: [error] })
    },
  }
}
