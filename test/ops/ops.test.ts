import { mkdtempSync, mkdirSync, readdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { parse, print } from 'graphql'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { createDb } from '../../src/db/client.ts'
import { createApp } from '../../src/app.ts'
import { openConversationEvents, type Delivery } from '../../src/domain/live/delivery.ts'
import { sendMessage } from '../../src/domain/send/sendMessage.ts'
import { DEFAULT_SETTINGS } from '../../src/domain/core/settings.ts'
import { databaseReadiness } from '../../src/ops/health.ts'
import { createLogger, yogaLogger, type Logger } from '../../src/ops/logger.ts'
import { createMetrics, type Metrics } from '../../src/ops/metrics.ts'
import { parseId } from '../../src/domain/core/ids.ts'
import { createRealtime } from '../../src/realtime/pubsub.ts'
import { createYogaServer } from '../../src/http/yoga.ts'
import { AUTH_SECRET, newUsers, testApp } from '../support/harness.ts'
import { ConversationEvents } from '../support/live.ts'
import { createGroup, SendMessage, sendText } from '../support/operations.ts'
import { startServer, subscribeWs, wsClient, type TestServer } from '../support/server.ts'

const origin = (server: TestServer) => new URL(server.url).origin

/** The value of one sample in the Prometheus text format (0 when the series is absent). */
function sample(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `))
  return line ? Number(line.slice(series.length + 1)) : 0
}

describe('health and readiness', () => {
  it('/healthz answers while the process is up, /readyz once the database is reachable and migrated', async () => {
    const server = await startServer()
    try {
      const health = await fetch(`${origin(server)}/healthz`)
      expect([health.status, await health.json()]).toEqual([200, { status: 'ok' }])
      const ready = await fetch(`${origin(server)}/readyz`)
      expect([ready.status, await ready.json()]).toEqual([200, { status: 'ready' }])
    } finally {
      await server.close()
    }
  })

  it('/readyz answers 503 with the reason when a dependency is not ready', async () => {
    const server = await startServer(testApp().app, {
      readinessChecks: [{ name: 'redis', check: async () => 'not connected' }],
    })
    try {
      const ready = await fetch(`${origin(server)}/readyz`)
      expect([ready.status, await ready.json()]).toEqual([
        503,
        { status: 'unavailable', checks: { redis: 'not connected' } },
      ])
    } finally {
      await server.close()
    }
  })

  it('a database missing a shipped migration is not ready', async () => {
    const shipped = path.resolve(import.meta.dirname, '../../prisma/migrations')
    const dir = mkdtempSync(path.join(tmpdir(), 'parley-migrations-'))
    for (const name of readdirSync(shipped, { withFileTypes: true }).filter((e) => e.isDirectory()))
      mkdirSync(path.join(dir, name.name))
    mkdirSync(path.join(dir, '29991231000000_from_the_future'))
    expect(await databaseReadiness(testApp().db, { migrationsDir: dir }).check()).toBe(
      'pending migrations: 29991231000000_from_the_future',
    )
    expect(await databaseReadiness(testApp().db, { migrationsDir: shipped }).check()).toBeNull()
  })

  it('during close() /readyz answers 503 at once, before the drain ends', async () => {
    let checking!: () => void
    const checkStarted = new Promise<void>((resolve) => (checking = resolve))
    let release!: () => void
    const held = new Promise<null>((resolve) => (release = () => resolve(null)))
    const server = await startServer(testApp().app, {
      readinessChecks: [{ name: 'held', check: () => (checking(), held) }],
    })
    // A probe in flight when shutdown starts: it must not report ready, and close() waits for it.
    const probe = fetch(`${origin(server)}/readyz`)
    await checkStarted
    const closed = server.close()
    release()
    const response = await probe
    expect([response.status, await response.json()]).toEqual([503, { status: 'stopping' }])
    await closed
  })
})

describe('metrics', () => {
  let metrics: Metrics
  let server: TestServer
  beforeAll(async () => {
    metrics = createMetrics()
    server = await startServer(testApp().app, { metrics, serveMetrics: true })
  })
  afterAll(() => server.close())

  const scrape = async () => {
    const response = await fetch(`${origin(server)}/metrics`)
    expect(response.headers.get('content-type')).toMatch(/^text\/plain/)
    return response.text()
  }

  it('one send moves the send histogram, the batch size and the operation counter', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    const before = await scrape()
    const response = await fetch(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${alice!.token}` },
      body: JSON.stringify({
        query: print(SendMessage),
        operationName: 'SendMessage',
        variables: {
          input: { conversationId: group.id, clientMessageId: 'metrics-1', content: { text: { text: 'hi' } } },
        },
      }),
    })
    expect(response.status).toBe(200)
    expect(((await response.json()) as { errors?: unknown }).errors).toBeUndefined()
    const after = await scrape()
    const delta = (series: string) => sample(after, series) - sample(before, series)
    expect(delta('parley_send_message_duration_seconds_count')).toBe(1)
    expect(delta('parley_send_batch_size_count')).toBe(1)
    expect(delta('parley_send_batch_size_sum')).toBe(1)
    expect(delta('parley_http_requests_total{operation="SendMessage",status="200"}')).toBe(1)
    expect(after).toMatch(/^parley_db_pool_connections \d+$/m)
    expect(after).toMatch(/^process_cpu_user_seconds_total /m)
  })

  it('counts replayed events, slow-consumer drops and errors answered over graphql-ws before execution', async () => {
    const [owner, member] = await newUsers(2)
    const group = await createGroup(owner!, [member!])
    for (const text of ['a', 'b', 'c']) await sendText(owner!, group.id, text)
    const before = await scrape()
    const delta = (after: string, series: string) => sample(after, series) - sample(before, series)
    const client = wsClient(server.wsUrl, member!.token)
    try {
      const resumed = subscribeWs(client, ConversationEvents, { conversationId: group.id, sincePts: group.lastPts })
      expect(await resumed.waitFor(3)).toHaveLength(3)
      const invalid = subscribeWs(client, parse('subscription { nope }'))
      await invalid.ended()
      expect(invalid.errors.map((e) => e.extensions?.code)).toEqual(['GRAPHQL_VALIDATION_FAILED'])
      resumed.dispose()
      const after = await scrape()
      expect(delta(after, 'parley_replayed_events_total')).toBe(3)
      expect(delta(after, 'parley_graphql_errors_total{code="GRAPHQL_VALIDATION_FAILED"}')).toBe(1)
    } finally {
      await client.dispose()
    }

    // An instance whose subscriptions hold 3 waiting events, and a subscriber that stops reading.
    const slow = createApp({
      db: testApp().db,
      settings: DEFAULT_SETTINGS,
      realtime: createRealtime({ subscriberBuffer: 3 }),
    })
    const slowMetrics = createMetrics()
    slowMetrics.bindApp(slow)
    const viewer = {
      userId: parseId(member!.id, 'User'),
      handle: member!.handle,
      kind: 'HUMAN' as const,
      isOperator: false,
    }
    const stream = await openConversationEvents(slow, viewer, { conversationId: group.id })
    const ownerViewer = { ...viewer, userId: parseId(owner!.id, 'User'), handle: owner!.handle }
    for (let i = 0; i < 4; i++)
      await sendMessage(slow, ownerViewer, {
        conversationId: group.id,
        clientMessageId: `slow-${i}-${Math.random()}`,
        content: { text: { text: 'x' } },
      })
    expect(((await stream.next()).value as Delivery).payload).toMatchObject({
      typename: 'Error',
      error: { extensions: { code: 'RESYNC_REQUIRED' } },
    })
    expect(sample(await slowMetrics.registry.metrics(), 'parley_slow_consumer_drops_total')).toBe(1)
  })

  it('errors count by extensions.code, and operation names are capped', async () => {
    const before = await scrape()
    const response = await fetch(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ nope }' }),
    })
    const { errors } = (await response.json()) as { errors: { extensions: { code: string } }[] }
    expect(errors.map((e) => e.extensions.code)).toEqual(['GRAPHQL_VALIDATION_FAILED'])
    const after = await scrape()
    const series = 'parley_graphql_errors_total{code="GRAPHQL_VALIDATION_FAILED"}'
    expect(sample(after, series) - sample(before, series)).toBe(1)
    expect(
      sample(after, `parley_http_requests_total{operation="anonymous",status="${response.status}"}`),
    ).toBeGreaterThanOrEqual(1)
    const labels = new Set(Array.from({ length: 300 }, (_, i) => metrics.operationLabel(`Op${i}`)))
    expect(labels.size).toBeLessThanOrEqual(201)
    expect(labels.has('other')).toBe(true)
  })
})

describe('logs', () => {
  it('are JSON lines carrying the request id of the HTTP request, and no token', async () => {
    const lines: Record<string, unknown>[] = []
    const log: Logger = createLogger('debug', { write: (line: string) => void lines.push(JSON.parse(line)) })
    const [user] = await newUsers(1)
    // A database without Parley's tables makes the query fail unexpectedly: the masked error is logged.
    const db = createDb(inject('adminDatabaseUrl'), { poolSize: 1 })
    const server = await startServer(createApp({ db, realtime: createRealtime(), settings: DEFAULT_SETTINGS }), { log })
    try {
      const response = await fetch(server.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${user!.token}`,
          'x-request-id': 'probe-42',
        },
        body: JSON.stringify({ query: '{ viewer { user { id } } }' }),
      })
      expect(response.headers.get('x-request-id')).toBe('probe-42')
      await response.json()
      const unexpected = lines.find((l) => l.msg === 'unexpected error')
      expect(unexpected).toMatchObject({ level: 50, requestId: 'probe-42', service: 'parley' })
      expect(JSON.stringify(lines)).not.toContain(user!.token)
    } finally {
      await server.close()
      await db.$disconnect()
    }
  })

  it('name the request an unexpected error in a resolver came from', async () => {
    const lines: Record<string, unknown>[] = []
    const log = createLogger('debug', { write: (line: string) => void lines.push(JSON.parse(line)) })
    const [user] = await newUsers(1)
    // The viewer resolves without the database, so the failure happens during execution (the user loader).
    const db = createDb(inject('adminDatabaseUrl'), { poolSize: 1 })
    const app = createApp({ db, realtime: createRealtime(), settings: DEFAULT_SETTINGS })
    const resolveViewer = async () => ({ userId: 1, handle: 'probe', kind: 'HUMAN' as const, isOperator: false })
    const yoga = createYogaServer({
      app,
      authSecret: AUTH_SECRET,
      maxBodyBytes: 10_000,
      production: true,
      logger: yogaLogger(log),
      resolveViewer,
    })
    try {
      const response = await yoga.fetch(
        'http://parley.test/graphql',
        {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${user!.token}` },
          body: JSON.stringify({ query: '{ viewer { user { handle } } }' }),
        },
        { requestId: 'probe-43' },
      )
      expect(
        ((await response.json()) as { errors: { extensions: { code: string } }[] }).errors[0]!.extensions.code,
      ).toBe('INTERNAL_SERVER_ERROR')
      expect(lines.find((l) => l.msg === 'unexpected error')).toMatchObject({ level: 50, requestId: 'probe-43' })
    } finally {
      await db.$disconnect()
    }
  })
})
