import { getOperationAST, type DocumentNode, type ExecutionResult, type GraphQLError } from 'graphql'
import type { Plugin } from 'graphql-yoga'
import type { Metrics } from '../../ops/metrics.ts'

const rootFields = (document: DocumentNode, operationName?: string | null): string[] =>
  getOperationAST(document, operationName)?.selectionSet.selections.flatMap((s) =>
    s.kind === 'Field' ? [s.name.value] : [],
  ) ?? []

const errorsOf = (result: unknown): readonly GraphQLError[] => (result as ExecutionResult | undefined)?.errors ?? []

/**
 * Counts requests by operation name and status, errors by code, sendMessage latency and open
 * subscriptions. Errors are counted once: from execution (every transport), or from the HTTP
 * result when the request never reached execution (parse, validation, limits, a refused token).
 */
export function useMetrics(metrics: Metrics): Plugin {
  const operations = new WeakMap<Request, string>()
  const executed = new WeakSet<Request>()
  const countErrors = (result: unknown) => errorsOf(result).forEach((e) => metrics.countError(e.extensions?.code))
  return {
    onParams({ params, request }) {
      operations.set(request, metrics.operationLabel(params.operationName))
    },
    onExecute({ args }) {
      const request = (args.contextValue as { request?: Request }).request
      if (request) {
        executed.add(request)
        // A request without operationName still names its operation in the document.
        if (operations.get(request) === 'anonymous')
          operations.set(
            request,
            metrics.operationLabel(getOperationAST(args.document, args.operationName)?.name?.value),
          )
      }
      const timer = rootFields(args.document, args.operationName).includes('sendMessage')
        ? metrics.sendDuration.startTimer()
        : undefined
      return {
        onExecuteDone({ result }) {
          timer?.()
          if (Symbol.asyncIterator in result) return { onNext: ({ result }) => countErrors(result) }
          countErrors(result)
        },
      }
    },
    onSubscribe({ args }) {
      const request = (args.contextValue as { request?: Request }).request
      if (request) executed.add(request)
      const field = rootFields(args.document, args.operationName)[0] ?? 'unknown'
      return {
        onSubscribeResult({ result }) {
          if (!(Symbol.asyncIterator in result)) return countErrors(result)
          metrics.subscriptions.inc({ field })
          return { onNext: ({ result }) => countErrors(result), onEnd: () => metrics.subscriptions.dec({ field }) }
        },
      }
    },
    onResultProcess({ request, result }) {
      if (!executed.has(request) && !(Symbol.asyncIterator in (result as object))) countErrors(result)
    },
    onResponse({ request, response }) {
      metrics.requests.inc({ operation: operations.get(request) ?? 'none', status: String(response.status) })
    },
  }
}
