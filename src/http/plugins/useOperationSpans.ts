import { context, propagation, SpanKind, SpanStatusCode, type Attributes } from '@opentelemetry/api'
import { getOperationAST, type ExecutionResult } from 'graphql'
import type { Plugin } from 'graphql-yoga'
import { tracer } from '../../ops/tracing.ts'

const errorCodes = (result: ExecutionResult): string[] => [
  ...new Set(
    (result.errors ?? []).map((e) => (typeof e.extensions?.code === 'string' ? e.extensions.code : 'UNKNOWN')),
  ),
]

/**
 * A SERVER span around each query and mutation, named like "mutation SendMessage", continuing the
 * caller's trace when the request carries a W3C traceparent. The resolvers run inside it, so the
 * root-field span (schema/builder.ts), Prisma's statement spans and the publish span nest under it.
 * Subscriptions get none: a span that lasts as long as a socket tells nothing.
 */
export function useOperationSpans(): Plugin {
  return {
    onExecute({ args, executeFn, setExecuteFn }) {
      const operation = getOperationAST(args.document, args.operationName)
      if (!operation) return
      const name = `${operation.operation} ${operation.name?.value ?? 'anonymous'}`
      const request = (args.contextValue as { request?: Request }).request
      const parent = request
        ? propagation.extract(context.active(), Object.fromEntries(request.headers))
        : context.active()
      const attributes: Attributes = {
        'graphql.operation.type': operation.operation,
        'graphql.operation.name': operation.name?.value ?? 'anonymous',
      }
      const requestId = (args.contextValue as { requestId?: string }).requestId
      if (requestId) attributes['parley.request_id'] = requestId
      setExecuteFn((execArgs) =>
        tracer.startActiveSpan(name, { kind: SpanKind.SERVER, attributes }, parent, async (span) => {
          try {
            const result = (await executeFn(execArgs)) as ExecutionResult
            const codes = errorCodes(result)
            if (codes.length) {
              span.setAttribute('graphql.error.codes', codes)
              span.setStatus({ code: SpanStatusCode.ERROR, message: codes.join(', ') })
            }
            return result
          } finally {
            span.end()
          }
        }),
      )
    },
  }
}
