import {
  createSourceEventStream,
  getVariableValues,
  isInputObjectType,
  isListType,
  isNonNullType,
  typeFromAST,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  type GraphQLInputType,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from 'graphql'
import { compileQuery, isCompiledQuery, type CompiledQuery } from 'graphql-jit'
import { isAsyncIterable, mapAsyncIterator, type Plugin } from 'graphql-yoga'
import type { SharedView } from '../../domain/live/index.ts'
import { sameForEveryMember } from '../../schema/sharedViews.ts'

/**
 * One execution for every subscriber of an event who sees it alike (decision 0271): the first one
 * to take the event runs it, the others with the same view, operation and variables get the same
 * result (graphql-ws still writes a frame per subscription, with its own id).
 */
function sharedResult(
  view: SharedView,
  entry: Compiled,
  variables: string,
  run: () => ExecutionResult | Promise<ExecutionResult>,
): ExecutionResult | Promise<ExecutionResult> {
  let byOperation = view.scope.get(entry) as Map<string, ExecutionResult | Promise<ExecutionResult>> | undefined
  if (!byOperation) view.scope.set(entry, (byOperation = new Map()))
  const key = `${view.key}\n${variables}`
  let result = byOperation.get(key)
  if (!result) byOperation.set(key, (result = run()))
  return result
}

/** An input type with a @oneOf input object somewhere inside it. */
function reachesOneOf(type: GraphQLInputType, seen = new Set<GraphQLInputType>()): boolean {
  if (isNonNullType(type) || isListType(type)) return reachesOneOf(type.ofType, seen)
  if (!isInputObjectType(type) || seen.has(type)) return false
  seen.add(type)
  return type.isOneOf || Object.values(type.getFields()).some((field) => reachesOneOf(field.type, seen))
}

/** Whether a variable's value, as sent, breaks a @oneOf rule (exactly one member, not null) anywhere inside. */
function breaksOneOf(type: GraphQLInputType, value: unknown): boolean {
  if (isNonNullType(type)) return breaksOneOf(type.ofType, value)
  if (value === null || value === undefined) return false
  if (isListType(type))
    return Array.isArray(value) ? value.some((item) => breaksOneOf(type.ofType, item)) : breaksOneOf(type.ofType, value)
  if (!isInputObjectType(type) || typeof value !== 'object' || Array.isArray(value)) return false
  const entries = Object.entries(value)
  if (type.isOneOf && (entries.length !== 1 || entries[0]![1] === null)) return true
  const fields = type.getFields()
  return entries.some(([name, field]) => fields[name] !== undefined && breaksOneOf(fields[name].type, field))
}

/** The variables whose types hold a @oneOf input, once per operation. */
const oneOfVariables = (schema: GraphQLSchema, operation: OperationDefinitionNode) =>
  (operation.variableDefinitions ?? []).flatMap((definition) => {
    const type = typeFromAST(schema, definition.type) as GraphQLInputType | undefined
    return type && reachesOneOf(type) ? [{ name: definition.variable.name.value, type }] : []
  })

type Compiled = {
  query: CompiledQuery
  operation: OperationDefinitionNode
  oneOf: { name: string; type: GraphQLInputType }[]
  /** A subscription whose events' results are the same for every subscriber with the same view (schema/sharedViews.ts). */
  sharesViews: boolean
}

/**
 * Executes operations with graphql-jit: each document is compiled once into plain JavaScript, which
 * cuts the executor's per-result CPU several times over (a resume replay runs one execution per
 * event). graphql-js keeps the parts graphql-jit gets wrong or leaves out: the subscription's event
 * stream (graphql-jit passes the operation's variables to the subscribe resolver instead of the
 * field's arguments), and the variables' errors. graphql-jit coerces the variables as it runs, but
 * ignores @oneOf, and its messages are not graphql-js's: graphql-js coerces them when graphql-jit
 * refuses them or a @oneOf rule is broken, so every refusal keeps graphql-js's errors, and valid
 * variables are coerced once (coercing them twice was about 2 % of the server CPU of a send).
 */
export function useCompiledExecution(): Plugin {
  const compiled = new WeakMap<DocumentNode, Map<string | undefined, Compiled | ExecutionResult>>()

  const compile = (args: ExecutionArgs): Compiled | ExecutionResult => {
    const operationName = args.operationName ?? undefined
    let byOperation = compiled.get(args.document)
    if (!byOperation) compiled.set(args.document, (byOperation = new Map()))
    let entry = byOperation.get(operationName)
    if (!entry) {
      const query = compileQuery(args.schema, args.document, operationName, { disablingCapturingStackErrors: true })
      const operation = args.document.definitions.find(
        (d): d is OperationDefinitionNode =>
          d.kind === 'OperationDefinition' && (!operationName || d.name?.value === operationName),
      )
      entry =
        isCompiledQuery(query) && operation
          ? {
              query,
              operation,
              oneOf: oneOfVariables(args.schema, operation),
              sharesViews:
                operation.operation === 'subscription' &&
                sameForEveryMember(args.schema, operation, args.document.definitions),
            }
          : (query as ExecutionResult)
      byOperation.set(operationName, entry)
    }
    return entry
  }

  /** graphql-js's errors for the variables, or null when it accepts them. */
  const variableErrors = (args: ExecutionArgs, { operation }: Compiled) =>
    getVariableValues(args.schema, operation.variableDefinitions ?? [], args.variableValues ?? {}).errors ?? null

  const execute = (args: ExecutionArgs) => {
    const entry = compile(args)
    if (!('query' in entry)) return entry
    const variables = args.variableValues ?? {}
    if (entry.oneOf.some(({ name, type }) => breaksOneOf(type, variables[name]))) {
      const errors = variableErrors(args, entry)
      if (errors) return { errors }
    }
    const result = entry.query.query(args.rootValue, args.contextValue, args.variableValues)
    // graphql-jit answers refused variables with errors and no data, before anything runs.
    const refused = (r: ExecutionResult) =>
      !('data' in r) && r.errors?.length ? { errors: variableErrors(args, entry) ?? r.errors } : r
    return result instanceof Promise ? result.then(refused) : refused(result)
  }

  const subscribe = async (args: ExecutionArgs) => {
    const entry = compile(args)
    if (!('query' in entry)) return entry
    const stream = await createSourceEventStream(args)
    if (!isAsyncIterable(stream)) return stream
    // Each event runs on its own copy of the operation's context: what its resolvers put there (the
    // event's loaders, see schema/subscription.ts) goes with the event, not held while the subscription idles.
    const context = args.contextValue as object
    const variables = entry.sharesViews ? JSON.stringify(args.variableValues ?? {}) : ''
    return mapAsyncIterator(stream, (event: unknown) => {
      const run = () => entry.query.query(event, { ...context }, args.variableValues)
      const view = entry.sharesViews ? (event as { view?: SharedView }).view : undefined
      return view ? sharedResult(view, entry, variables, run) : run()
    })
  }

  return {
    onExecute: ({ setExecuteFn }) => setExecuteFn(execute),
    onSubscribe: ({ setSubscribeFn }) => setSubscribeFn(subscribe),
  }
}
