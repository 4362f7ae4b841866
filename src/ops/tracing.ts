import { context, propagation, SpanKind, SpanStatusCode, trace, type Attributes } from '@opentelemetry/api'
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http'
import { resourceFromAttributes } from '@opentelemetry/resources'
import { BatchSpanProcessor, NodeTracerProvider, SimpleSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-node'
import { PrismaInstrumentation } from '@prisma/instrumentation'
import { getOperationAST, type ExecutionResult } from 'graphql'
import type { Plugin } from 'graphql-yoga'
import type { Realtime } from '../realtime/pubsub.ts'

/**
 * Every Parley span comes from this tracer. Until a provider is registered it is OpenTelemetry's
 * no-op, so the spans below cost next to nothing when tracing is off.
 */
export const tracer = trace.getTracer('parley')

export type Tracing = { shutdown(): Promise<void> }

/**
 * Registers a tracer provider for the process, exporting over OTLP/HTTP (the endpoint and headers
 * come from the standard OTEL_EXPORTER_OTLP_* variables) or to `exporter` (tests), and turns on
 * Prisma's spans: one per transaction and one per SQL statement, with the statement's text and no
 * values. Process-wide by nature: OpenTelemetry's API and Prisma's hook are globals.
 */
export function startTracing(opts: { serviceName: string; exporter?: SpanExporter }): Tracing {
  const processor = opts.exporter ? new SimpleSpanProcessor(opts.exporter) : new BatchSpanProcessor(new OTLPTraceExporter())
  const provider = new NodeTracerProvider({ resource: resourceFromAttributes({ 'service.name': opts.serviceName }), spanProcessors: [processor] })
  provider.register()
  const prisma = new PrismaInstrumentation()
  prisma.setTracerProvider(provider)
  prisma.enable()
  return {
    async shutdown() {
      prisma.disable()
      await provider.shutdown()
    },
  }
}

const errorCodes = (result: ExecutionResult): string[] => [...new Set((result.errors ?? []).map((e) => String(e.extensions?.code ?? 'UNKNOWN')))]

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
      const parent = request ? propagation.extract(context.active(), Object.fromEntries(request.headers)) : context.active()
      const attributes: Attributes = { 'graphql.operation.type': operation.operation, 'graphql.operation.name': operation.name?.value ?? 'anonymous' }
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

/** The bus with a span around each publish (after a commit), counting the events it carries. */
export function traceRealtime(realtime: Realtime): Realtime {
  return {
    ...realtime,
    publish(events) {
      // Ends when the bus has taken the events (Redis: the PUBLISH replies), not when they were handed over.
      return tracer.startActiveSpan('parley.publish', { kind: SpanKind.PRODUCER, attributes: { 'parley.events': events.length } }, (span) =>
        realtime.publish(events).finally(() => span.end()),
      )
    },
  }
}
