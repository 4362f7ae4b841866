import { GraphQLError, Lexer, Source, TokenKind, visit, type DocumentNode, type GraphQLSchema } from 'graphql'
import type { Plugin } from 'graphql-yoga'
import { tallyOperation } from './queryNodes.ts'
/** The code of every query-shape refusal (an addition to the contract's codes: docs/decisions/0060). */
export const QUERY_TOO_COMPLEX = 'QUERY_TOO_COMPLEX'

export type QueryLimits = {
  /** Objects the response may hold (src/http/plugins/queryNodes.ts, README "Limits"). */
  nodes: number
  /** Nested fields along one path, fragments flattened (they add no level in the response). */
  depth: number
  aliases: number
  directives: number
  tokens: number
  /** Brackets, braces and parentheses open at once in the source, checked before parsing. */
  nesting: number
}

export const DEFAULT_QUERY_LIMITS: QueryLimits = {
  nodes: 250_000,
  depth: 15,
  aliases: 30,
  directives: 20,
  tokens: 3_000,
  nesting: 64,
}

const figure = (n: number) => n.toLocaleString('en-US')

/**
 * overHttp: answered like Yoga's validation errors (400 under application/graphql-response+json);
 * Yoga reads that hint and leaves it out of the response. Parse errors get it from Yoga itself.
 */
function tooComplex(
  limit: keyof QueryLimits,
  max: number,
  found: number,
  message: string,
  overHttp = false,
): GraphQLError {
  const http = overHttp ? { http: { spec: true, status: 400 } } : {}
  return new GraphQLError(message, { extensions: { code: QUERY_TOO_COMPLEX, limit, max, found, ...http } })
}

/**
 * One pass of graphql-js's lexer over the source: the token count and the deepest bracket nesting.
 * Parsing is recursive descent, so a 2,000-level list literal overflows the stack inside `parse`;
 * the lexer is a loop, so this check runs in constant stack whatever the input.
 */
function checkSource(source: string | Source, limits: QueryLimits): void {
  const lexer = new Lexer(typeof source === 'string' ? new Source(source) : source)
  let tokens = 0
  let open = 0
  let deepest = 0
  for (let token = lexer.advance(); token.kind !== TokenKind.EOF; token = lexer.advance()) {
    tokens++
    if (token.kind === TokenKind.BRACE_L || token.kind === TokenKind.BRACKET_L || token.kind === TokenKind.PAREN_L)
      deepest = Math.max(deepest, ++open)
    else if (token.kind === TokenKind.BRACE_R || token.kind === TokenKind.BRACKET_R || token.kind === TokenKind.PAREN_R)
      open--
  }
  if (deepest > limits.nesting) {
    throw tooComplex(
      'nesting',
      limits.nesting,
      deepest,
      `This query nests brackets ${figure(deepest)} levels deep; the limit is ${figure(limits.nesting)}.`,
    )
  }
  if (tokens > limits.tokens) {
    throw tooComplex(
      'tokens',
      limits.tokens,
      tokens,
      `This query has ${figure(tokens)} tokens; the limit is ${figure(limits.tokens)}. Send a smaller document.`,
    )
  }
}

const writtenCounts = new WeakMap<DocumentNode, { aliases: number; directives: number }>()

/** Aliases and directives as written in the document (every operation and fragment), once per document. */
function countAliasesAndDirectives(document: DocumentNode) {
  const cached = writtenCounts.get(document)
  if (cached) return cached
  const counts = { aliases: 0, directives: 0 }
  visit(document, {
    Field: (field) => void (field.alias && counts.aliases++),
    Directive: () => void counts.directives++,
  })
  writtenCounts.set(document, counts)
  return counts
}

type Params = { operationName?: string | null; variables?: unknown }

/** Checks a valid document against the limits; throws the first one it exceeds. */
function checkDocument(
  schema: GraphQLSchema,
  document: DocumentNode,
  params: Params,
  limits: QueryLimits,
  overHttp = false,
): void {
  const { aliases, directives } = countAliasesAndDirectives(document)
  if (aliases > limits.aliases)
    throw tooComplex(
      'aliases',
      limits.aliases,
      aliases,
      `This query uses ${figure(aliases)} aliases; the limit is ${figure(limits.aliases)}.`,
      overHttp,
    )
  if (directives > limits.directives) {
    throw tooComplex(
      'directives',
      limits.directives,
      directives,
      `This query uses ${figure(directives)} directives; the limit is ${figure(limits.directives)}.`,
      overHttp,
    )
  }
  const tally = tallyOperation(schema, document, params.operationName, params.variables)
  if (!tally) return
  if (tally.height > limits.depth) {
    throw tooComplex(
      'depth',
      limits.depth,
      tally.height,
      `This query is ${figure(tally.height)} levels deep; the limit is ${figure(limits.depth)}.`,
      overHttp,
    )
  }
  if (tally.nodes > limits.nodes) {
    throw tooComplex(
      'nodes',
      limits.nodes,
      tally.nodes,
      `This query would return up to ${figure(tally.nodes)} nodes; the limit is ${figure(limits.nodes)}. Ask for smaller pages.`,
      overHttp,
    )
  }
}

/**
 * Query limits for HTTP and graphql-ws alike (both run through Yoga's envelop). The source is
 * checked before parsing; the rest after graphql-js validation has passed. The node count depends
 * on the variables, so a refusal is thrown rather than set as the validation result, which Yoga
 * caches per document.
 */
export function useQueryLimits(
  limits: QueryLimits = DEFAULT_QUERY_LIMITS,
): Plugin<{ params?: Params; request?: Request }> {
  return {
    onParse({ parseFn, setParseFn }) {
      setParseFn((source, options) => {
        checkSource(source, limits)
        return parseFn(source, options)
      })
    },
    onValidate({ params: { schema, documentAST }, context }) {
      return ({ valid }) => {
        if (valid) checkDocument(schema, documentAST, context.params ?? {}, limits, context.request !== undefined)
      }
    },
  }
}
