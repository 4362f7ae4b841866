import { SpanKind, trace } from '@opentelemetry/api'
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http'
import { resourceFromAttributes } from '@opentelemetry/resources'
import {
  BatchSpanProcessor,
  NodeTracerProvider,
  SimpleSpanProcessor,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-node'
import { PrismaInstrumentation } from '@prisma/instrumentation'
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
  const processor = opts.exporter
    ? new SimpleSpanProcessor(opts.exporter)
    : new BatchSpanProcessor(new OTLPTraceExporter())
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': opts.serviceName }),
    spanProcessors: [processor],
  })
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

/** The bus with a span around each publish (after a commit), counting the events it carries. */
export function traceRealtime(realtime: Realtime): Realtime {
  return {
    ...realtime,
    publish(events) {
      // Ends when the bus has taken the events (Redis: the PUBLISH replies), not when they were handed over.
      return tracer.startActiveSpan(
        'parley.publish',
        { kind: SpanKind.PRODUCER, attributes: { 'parley.events': events.length } },
        (span) => realtime.publish(events).finally(() => span.end()),
      )
    },
  }
}
