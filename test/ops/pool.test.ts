import type { Client } from 'graphql-ws'
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest'
import { createDb, poolOf } from '../../src/db/client.ts'
import { createLogger } from '../../src/ops/logger.ts'
import { createRealtime } from '../../src/realtime/pubsub.ts'
import { newUsers, type GraphQLResponse } from '../support/harness.ts'
import { ConversationEvents, Position } from '../support/live.ts'
import { createGroup, lastSeqOf, SendMessage } from '../support/operations.ts'
import {
  post,
  startInstance,
  subscribeWs,
  waitForSubscriptions,
  wsClient,
  type Received,
  type TestServer,
} from '../support/server.ts'

/** Instances on a pool of 20: one with the default wait for a connection (10 s), one waiting at most 1 s. */
const POOL_SIZE = 20
let server: TestServer
let impatient: TestServer
/** The impatient instance's log lines. */
const lines: { level: number; msg: string }[] = []
const clients: Client[] = []
beforeAll(async () => {
  ;[server, impatient] = await Promise.all([
    startInstance(createRealtime(), { poolSize: POOL_SIZE }),
    startInstance(createRealtime(), {
      poolSize: POOL_SIZE,
      poolTimeoutMs: 1_000,
      log: createLogger('info', { write: (line: string) => void lines.push(JSON.parse(line)) }),
    }),
  ])
})
afterAll(async () => {
  await Promise.all(clients.map((c) => Promise.resolve(c.dispose())))
  await Promise.all([server.close(), impatient.close()])
})

const pool = (instance = server) => poolOf(instance.app.db)!
/** Connections checked out of the pool right now. */
const busy = (instance = server) => pool(instance).totalCount - pool(instance).idleCount
/** Resolves once no connection is checked out and nothing waits (what an idle server holds: nothing). */
async function idle(instance = server) {
  while (busy(instance) > 0 || pool(instance).waitingCount > 0) await new Promise((resolve) => setTimeout(resolve, 20))
}
type Refusal = { extensions?: { code?: string; retryAfterMs?: number } }
const refusalOf = (response: GraphQLResponse<unknown>) => response.errors?.[0] as Refusal | undefined

describe('pool exhaustion', () => {
  it('500 graphql-ws subscriptions and 32 senders on a pool of 20: every send answers, idle subscriptions hold no connection', async () => {
    const readers = await newUsers(10, 'pool-reader')
    const senders = await newUsers(32, 'pool-sender')
    const group = await createGroup(readers[0]!, [...readers.slice(1), ...senders])
    // Ten readers, five sockets each, ten subscriptions per socket, all opening at once.
    const streams: Received<unknown>[] = []
    for (const reader of readers) {
      for (let socket = 0; socket < 5; socket++) {
        const client = wsClient(server.wsUrl, reader.token)
        clients.push(client)
        for (let i = 0; i < 10; i++)
          streams.push(subscribeWs(client, ConversationEvents, { conversationId: group.id, sincePts: group.lastPts }))
      }
    }
    await Promise.all(readers.map((reader) => waitForSubscriptions(server.app, reader, 50)))
    // Open and idle, they hold nothing: 500 subscriptions, no connection checked out.
    await idle()
    expect(streams.flatMap((stream) => stream.errors)).toEqual([])

    // All 32 senders at once, each a message, while the 500 streams deliver.
    const outcomes = await Promise.all(
      senders.map(async (sender, s) => {
        const response = await post(server.url, sender.token, SendMessage, {
          input: { conversationId: group.id, clientMessageId: `pool-${s}`, content: { text: { text: `from ${s}` } } },
        })
        return response.data ? 'sent' : refusalOf(response)?.extensions?.code
      }),
    )
    // An exhausted pool may refuse a send cleanly; nothing else may go wrong, and nothing waits forever.
    expect(outcomes.filter((o) => o !== 'sent' && o !== 'UNAVAILABLE')).toEqual([])
    const sent = outcomes.filter((o) => o === 'sent').length
    expect(await lastSeqOf(readers[0]!, group.id)).toBe(group.lastSeq + sent)
    await Promise.all(streams.map((stream) => stream.waitFor(sent)))
    expect(streams.every((stream) => stream.events.length === sent && stream.errors.length === 0)).toBe(true)
    // Delivered and idle again: 500 open subscriptions, no connection held.
    expect(server.app.hub.stats().subscriptions).toBe(500)
    await idle()
  })

  it('a request that finds every connection busy waits the pool timeout, answers UNAVAILABLE with retryAfterMs and stores nothing; the retry succeeds', async () => {
    const [owner, member] = await newUsers(2)
    const group = await createGroup(owner!, [member!])
    let release!: () => void
    const released = new Promise<void>((resolve) => (release = resolve))
    const holders = Array.from({ length: POOL_SIZE }, () =>
      impatient.app.db.$transaction(async (tx) => {
        await tx.$queryRaw`SELECT 1`
        await released
      }),
    )
    while (busy(impatient) < POOL_SIZE) await new Promise((resolve) => setTimeout(resolve, 20))

    const input = {
      conversationId: group.id,
      clientMessageId: 'while-busy',
      content: { text: { text: 'wait for me' } },
    }
    const [refused, read] = await Promise.all([
      post(impatient.url, owner!.token, SendMessage, { input }),
      post(impatient.url, member!.token, Position, { id: group.id }),
    ])
    for (const response of [refused, read]) {
      expect(refusalOf(response)?.extensions?.code).toBe('UNAVAILABLE')
      expect(refusalOf(response)?.extensions?.retryAfterMs).toBeGreaterThan(0)
    }
    // Read through the test process's own pool: nothing was stored.
    expect(await lastSeqOf(owner!, group.id)).toBe(group.lastSeq)
    // Load, not a bug: no error line (with its stack) per refused request.
    expect(lines.filter((l) => l.level >= 50)).toEqual([])

    release()
    await Promise.all(holders)
    await new Promise((resolve) => setTimeout(resolve, refusalOf(refused)!.extensions!.retryAfterMs))
    const retried = await post(impatient.url, owner!.token, SendMessage, { input })
    expect(retried.data?.sendMessage).toMatchObject({ deduplicated: false, message: { seq: group.lastSeq + 1 } })
  })
})

describe('connection settings', () => {
  it('run without JIT compilation or Memoize, through the pool and through Prisma', async () => {
    const settings = `SELECT current_setting('jit') AS jit, current_setting('enable_memoize') AS memoize`
    expect((await pool().query(settings)).rows).toEqual([{ jit: 'off', memoize: 'off' }])
    expect(await server.app.db.$queryRawUnsafe(settings)).toEqual([{ jit: 'off', memoize: 'off' }])
  })

  it('keep idle connections open: a burst after a pause finds them (decision 0266)', async () => {
    const db = createDb(inject('databaseUrl'), { poolSize: 4 })
    // The pool's idle timers start when a connection is released; faked, the pause below takes no time.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    try {
      const connections = poolOf(db)!
      await Promise.all([1, 2, 3, 4].map(() => connections.query('SELECT pg_sleep(0.05)')))
      expect([connections.totalCount, connections.idleCount]).toEqual([4, 4])
      // pg's default would close each after 10 s idle.
      vi.advanceTimersByTime(60_000)
      expect([connections.totalCount, connections.idleCount]).toEqual([4, 4])
    } finally {
      vi.useRealTimers()
      await db.$disconnect()
    }
  })
})
