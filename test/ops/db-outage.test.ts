import pg from 'pg'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { isDatabaseOutage, RETRY_AFTER_MS } from '../../src/db/availability.ts'
import { parseId } from '../../src/domain/core/ids.ts'
import { createDb } from '../../src/db/client.ts'
import { withPgClient } from '../../src/db/pg.ts'
import { createApp } from '../../src/app.ts'
import { DEFAULT_SETTINGS } from '../../src/domain/core/settings.ts'
import { createLogger } from '../../src/ops/logger.ts'
import { createRealtime } from '../../src/realtime/pubsub.ts'
import { startDbProxy } from '../support/dbProxy.ts'
import { newUsers, type GraphQLResponse } from '../support/harness.ts'
import { ConversationEvents, SendTyping } from '../support/live.ts'
import { ConversationState, createGroup, History, SendMessage } from '../support/operations.ts'
import {
  post,
  startServer,
  subscribeSse,
  subscribeWs,
  waitForSubscriptions,
  wsClient,
  type TestServer,
} from '../support/server.ts'

type Line = { level: number; msg: string; err?: unknown }

describe('a database outage', () => {
  const lines: Line[] = []
  let proxy: Awaited<ReturnType<typeof startDbProxy>>
  let server: TestServer
  let closeDb: () => Promise<void>

  beforeAll(async () => {
    proxy = await startDbProxy(inject('databaseUrl'))
    const db = createDb(proxy.url, { poolSize: 4 })
    closeDb = () => db.$disconnect()
    const log = createLogger('info', { write: (line: string) => void lines.push(JSON.parse(line) as Line) })
    server = await startServer(
      createApp({ db, realtime: createRealtime(), settings: structuredClone(DEFAULT_SETTINGS) }),
      { log },
    )
  })
  afterAll(async () => {
    await server?.close()
    await closeDb?.()
    await proxy?.close()
  })

  const readyz = async () => {
    const response = await fetch(server.url.replace('/graphql', '/readyz'))
    return {
      status: response.status,
      body: (await response.json()) as { status: string; checks?: { database?: string } },
    }
  }
  const waitUntilReady = async () => {
    const deadline = Date.now() + 15_000
    while ((await readyz()).status !== 200) {
      if (Date.now() > deadline) throw new Error(`not ready again: ${JSON.stringify(await readyz())}`)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
  const outageLines = () =>
    lines
      .filter((l) => /^database (unavailable|available again)/.test(l.msg))
      .map((l) => l.msg.split(' (')[0]!.replace(/ after \d+ ms$/, ''))

  it('answers every request UNAVAILABLE with retryAfterMs, logs one line per state change, and serves again after it', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    const send = (i: number) =>
      post(server.url, alice!.token, SendMessage, {
        input: { conversationId: group.id, clientMessageId: `outage-${i}`, content: { text: { text: `m${i}` } } },
      })
    expect((await send(0)).errors).toBeUndefined()
    const before = (await alice!.run(ConversationState, { id: group.id })).conversation!

    for (const [round, how] of [
      [1, 'refuse'],
      [2, 'drop'],
    ] as const) {
      // A stream opened before the outage, and an event (as from another instance) it cannot read.
      const watcher = wsClient(server.wsUrl, bob!.token)
      const open = subscribeWs(watcher, ConversationEvents, { conversationId: group.id })
      await waitForSubscriptions(server.app, bob!, 1)
      await proxy.down(how)
      await server.app.realtime.publish([
        {
          type: 'typing',
          conversationId: parseId(group.id, 'Conversation'),
          userId: parseId(alice!.id, 'User'),
          expiresAt: new Date().toISOString(),
        },
      ])
      await open.ended()
      await watcher.dispose()
      // The open stream ends UNAVAILABLE too; its client resubscribes with sincePts once the database is back.
      expect(open.errors.map((e) => e.extensions?.code)).toEqual(['UNAVAILABLE'])
      expect(open.events).toEqual([])
      const answers: GraphQLResponse<unknown>[] = await Promise.all([
        ...Array.from({ length: 12 }, (_, i) => send(round * 100 + i)),
        ...Array.from({ length: 6 }, () => post(server.url, bob!.token, History, { id: group.id })),
        ...Array.from({ length: 6 }, () => post(server.url, bob!.token, SendTyping, { id: group.id })),
      ])
      const client = wsClient(server.wsUrl, bob!.token)
      const live = subscribeWs(client, ConversationEvents, { conversationId: group.id })
      const sse = subscribeSse(server.url, bob!.token, ConversationEvents, { conversationId: group.id })
      await Promise.all([live.ended(), sse.ended()])
      await client.dispose()
      for (const answer of [...answers, { errors: live.errors }, { errors: sse.errors }]) {
        expect(
          answer.errors?.map((e) => e.extensions?.code),
          how,
        ).toEqual(['UNAVAILABLE'])
        expect(answer.errors![0]!.extensions).toMatchObject({ retryAfterMs: RETRY_AFTER_MS })
      }
      const ready = await readyz()
      expect(ready.status).toBe(503)
      expect(ready.body.checks?.database).toMatch(/^unavailable since /)
      // One line for the whole outage, none per request, and no stack.
      expect(outageLines()).toEqual([
        ...Array(round - 1)
          .fill(['database unavailable', 'database available again'])
          .flat(),
        'database unavailable',
      ])
      await proxy.up()
      await waitUntilReady()
      expect(outageLines().at(-1)).toBe('database available again')
      expect((await send(round * 100 + 99)).errors).toBeUndefined()
    }
    expect(lines.filter((l) => l.level >= 50 || l.err !== undefined)).toEqual([])
    // Only the sends made while the database answered are stored.
    expect((await alice!.run(ConversationState, { id: group.id })).conversation!.lastSeq).toBe(before.lastSeq + 2)
  })
})

describe('isDatabaseOutage', () => {
  it('recognises a real server shutdown of a connection (57P01) and nothing the database refuses on purpose', async () => {
    const url = inject('databaseUrl')
    const victim = new pg.Client({ connectionString: url, application_name: `outage-${process.pid}` })
    await victim.connect()
    victim.on('error', () => {})
    const sleeping = victim.query('SELECT pg_sleep(30)').then(
      () => null,
      (error: unknown) => error,
    )
    await withPgClient(url, async (admin) => {
      for (let i = 0; i < 50; i++) {
        const { rowCount } = await admin.query(
          `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND state = 'active'`,
          [`outage-${process.pid}`],
        )
        if (rowCount) break
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    })
    const terminated = (await sleeping) as { code?: string }
    expect(terminated.code).toBe('57P01')
    expect(isDatabaseOutage(terminated)).toBe(true)
    await victim.end().catch(() => {})

    const refusals = await withPgClient(url, async (client) => {
      const errors: unknown[] = []
      for (const sql of [
        'SELECT 1/0',
        `SELECT E'a\\x00b'::text`,
        `SELECT '{"a": "\\u0000"}'::jsonb`,
        'SELECT * FROM no_such_table',
      ])
        errors.push(
          await client.query(sql).then(
            () => null,
            (error: unknown) => error,
          ),
        )
      return errors
    })
    expect(refusals.map((e) => (e as { code?: string }).code)).toEqual(['22012', '22021', '22P05', '42P01'])
    for (const error of refusals) expect(isDatabaseOutage(error)).toBe(false)
  })
})
