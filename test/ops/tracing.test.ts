import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base'
import { print } from 'graphql'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApp } from '../../src/app.ts'
import { DEFAULT_SETTINGS } from '../../src/domain/core/settings.ts'
import { startTracing, traceRealtime, type Tracing } from '../../src/ops/tracing.ts'
import { createRealtime } from '../../src/realtime/pubsub.ts'
import { newUsers, testApp } from '../support/harness.ts'
import { createGroup, History, SendMessage, sendText } from '../support/operations.ts'
import { startServer, type TestServer } from '../support/server.ts'

const exporter = new InMemorySpanExporter()
let tracing: Tracing
let server: TestServer

beforeAll(async () => {
  tracing = startTracing({ serviceName: 'parley-test', exporter })
  const app = createApp({ db: testApp().db, realtime: traceRealtime(createRealtime()), settings: DEFAULT_SETTINGS })
  server = await startServer(app, { tracing: true })
})
afterAll(async () => {
  await server.close()
  await tracing.shutdown()
})

const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId
const childrenOf = (spans: ReadableSpan[], parent: ReadableSpan) =>
  spans.filter((s) => parentOf(s) === parent.spanContext().spanId)
function descendantsOf(spans: ReadableSpan[], root: ReadableSpan): ReadableSpan[] {
  const children = childrenOf(spans, root)
  return [...children, ...children.flatMap((c) => descendantsOf(spans, c))]
}

async function send(
  token: string,
  conversationId: string,
  clientMessageId: string,
  text: string,
  headers: Record<string, string> = {},
) {
  const response = await fetch(server.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, ...headers },
    body: JSON.stringify({
      query: print(SendMessage),
      operationName: 'SendMessage',
      variables: { input: { conversationId, clientMessageId, content: { text: { text } } } },
    }),
  })
  return (await response.json()) as { errors?: { extensions: { code: string } }[] }
}

describe('traces', () => {
  it('one send is one tree: the operation, its action, every SQL statement (no values) and the publish', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    exporter.reset()
    const traceId = 'a'.repeat(32)
    const secret = `secret-text-${Date.now()}`
    const result = await send(alice!.token, group.id, 'trace-1', secret, {
      traceparent: `00-${traceId}-${'b'.repeat(16)}-01`,
    })
    expect(result.errors).toBeUndefined()

    const spans = exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId)
    const operation = spans.find((s) => s.name === 'mutation SendMessage')!
    expect(operation.attributes['graphql.operation.name']).toBe('SendMessage')
    expect(parentOf(operation)).toBe('b'.repeat(16))
    expect(operation.resource.attributes['service.name']).toBe('parley-test')

    const [action] = childrenOf(spans, operation)
    expect(action?.name).toBe('Mutation.sendMessage')
    const underAction = descendantsOf(spans, action!)
    const statements = underAction
      .filter((s) => s.name === 'prisma:client:db_query')
      .map((s) => String(s.attributes['db.query.text']))
    expect(statements.some((sql) => /FOR UPDATE/.test(sql))).toBe(true)
    expect(statements.some((sql) => /^INSERT/i.test(sql.trim()) || /INSERT INTO/i.test(sql))).toBe(true)
    expect(statements.join('\n')).not.toContain(secret)
    expect(underAction.some((s) => s.name === 'parley.publish' && s.attributes['parley.events'] === 1)).toBe(true)
    // Nothing of this trace hangs outside the operation.
    expect(spans.filter((s) => s !== operation).every((s) => descendantsOf(spans, operation).includes(s))).toBe(true)
  })

  it('a history page read straight through the pool is a statement span under its field, without values', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    const secret = `secret-text-${Date.now()}`
    await sendText(alice!, group.id, secret)
    exporter.reset()
    const response = await fetch(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${bob!.token}` },
      body: JSON.stringify({ query: print(History), operationName: 'History', variables: { id: group.id, last: 10 } }),
    })
    expect(
      ((await response.json()) as { data: { conversation: { messages: { edges: unknown[] } } } }).data.conversation
        .messages.edges.length,
    ).toBeGreaterThan(0)

    const spans = exporter.getFinishedSpans()
    const operation = spans.find((s) => s.name === 'query History')!
    const [field] = childrenOf(spans, operation)
    expect(field?.name).toBe('Query.conversation')
    const statements = descendantsOf(spans, field!)
      .filter((s) => s.name === 'parley.db_query')
      .map((s) => String(s.attributes['db.query.text']))
    expect(statements).toHaveLength(1)
    expect(statements[0]).toMatch(/WITH page AS/)
    expect(statements[0]).not.toContain(secret)
  })

  it('a refused operation marks its span with the error code', async () => {
    const [alice, outsider] = await newUsers(2)
    const group = await createGroup(alice!, [])
    exporter.reset()
    const result = await send(outsider!.token, group.id, 'trace-2', 'hello')
    expect(result.errors?.map((e) => e.extensions.code)).toEqual(['NOT_FOUND'])
    const operation = exporter.getFinishedSpans().find((s) => s.name === 'mutation SendMessage')!
    expect(operation.attributes['graphql.error.codes']).toEqual(['NOT_FOUND'])
    expect(operation.status.code).toBe(2)
  })
})
