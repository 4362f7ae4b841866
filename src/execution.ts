import { createSourceEventStream, getVariableValues, type DocumentNode, type ExecutionArgs, type ExecutionResult } from 'graphql'
import { compileQuery, isCompiledQuery, type CompiledQuery } from 'graphql-jit'
import { isAsyncIterable, mapAsyncIterator, type Plugin } from 'graphql-yoga'

/**
 * Executes operations with graphql-jit: each document is compiled once into plain JavaScript, which
 * cuts the executor's per-result CPU several times over (a resume replay runs one execution per
 * event). graphql-js keeps the parts graphql-jit gets wrong or leaves out: it coerces and checks the
 * variables (graphql-jit ignores @oneOf) and creates a subscription's event stream (graphql-jit passes
 * the operation's variables to the subscribe resolver instead of the field's arguments).
 */
export function useCompiledExecution(): Plugin {
  const compiled = new WeakMap<DocumentNode, Map<string | undefined, CompiledQuery | ExecutionResult>>()

  const compile = (args: ExecutionArgs) => {
    const operationName = args.operationName ?? undefined
    let byOperation = compiled.get(args.document)
    if (!byOperation) compiled.set(args.document, (byOperation = new Map()))
    let query = byOperation.get(operationName)
    if (!query) byOperation.set(operationName, (query = compileQuery(args.schema, args.document, operationName, { disablingCapturingStackErrors: true })))
    return query
  }

  /** The variables' errors if graphql-js refuses them, else null. */
  const variableErrors = (args: ExecutionArgs) => {
    const operation = args.document.definitions.find((d) => d.kind === 'OperationDefinition' && (!args.operationName || d.name?.value === args.operationName))
    if (operation?.kind !== 'OperationDefinition' || !operation.variableDefinitions?.length) return null
    const coerced = getVariableValues(args.schema, operation.variableDefinitions, args.variableValues ?? {})
    return coerced.errors ?? null
  }

  const execute = (args: ExecutionArgs) => {
    const query = compile(args)
    if (!isCompiledQuery(query)) return query
    const errors = variableErrors(args)
    if (errors) return { errors }
    return query.query(args.rootValue, args.contextValue, args.variableValues)
  }

  const subscribe = async (args: ExecutionArgs) => {
    const query = compile(args)
    if (!isCompiledQuery(query)) return query
    const stream = await createSourceEventStream(args)
    if (!isAsyncIterable(stream)) return stream
    // Each event runs on its own copy of the operation's context: what its resolvers put there (the
    // event's loaders, see schema/subscription.ts) goes with the event, not held while the subscription idles.
    const context = args.contextValue as object
    return mapAsyncIterator(stream, (event: unknown) => query.query(event, { ...context }, args.variableValues))
  }

  return {
    onExecute: ({ setExecuteFn }) => setExecuteFn(execute),
    onSubscribe: ({ setSubscribeFn }) => setSubscribeFn(subscribe),
  }
}
