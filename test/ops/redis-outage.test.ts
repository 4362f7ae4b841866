import { once } from 'node:events'
import type { Client } from 'graphql-ws'
import type { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseRateLimits } from '../../src/config/rateLimits.ts'
import { createRateLimitRedis, createRedisRealtime } from '../../src/realtime/redis.ts'
import { codes, newUsers, type TestUser } from '../support/harness.ts'
import { ConversationEvents, Position, SendTyping } from '../support/live.ts'
import { createGroup, SendMessage } from '../support/operations.ts'
import { ownRedis } from '../support/redis.ts'
import {
  post,
  sendVia,
  startInstance,
  subscribeWs,
  waitForSubscriptions,
  wsClient,
  type TestServer,
} from '../support/server.ts'

/**
 * Two instances through a redis-server of this file's own, which the tests stop (SIGKILL) and start
 * again; a second pair counts rate limits in it.
 */
const redis = await ownRedis()
const logged: string[] = []
const bus = () => createRedisRealtime(redis.url, { log: (message) => void logged.push(message) })
let a: TestServer
let b: TestServer
let limitedA: TestServer
let limitedB: TestServer
const stores: Redis[] = []
const clients: Client[] = []

beforeAll(async () => {
  const rateLimits = parseRateLimits('send=2/60,sendSustained=off,largeGroupSend=off,largeGroupSendSustained=off')
  const limited = () => {
    const store = createRateLimitRedis(redis.url, () => {})
    stores.push(store)
    return startInstance(bus(), { settings: { rateLimits }, rateLimitStore: store })
  }
  ;[a, b, limitedA, limitedB] = await Promise.all([startInstance(bus()), startInstance(bus()), limited(), limited()])
})
afterAll(async () => {
  await Promise.all(clients.map((c) => Promise.resolve(c.dispose())))
  await Promise.all([a, b, limitedA, limitedB].map((s) => s.close()))
  stores.forEach((store) => store.disconnect())
})

type Events = { conversationEvents: { __typename: string; pts?: number; message?: { id: string } } }[]

describe('a Redis outage', () => {
  it('every instance keeps serving; once Redis is back, subscribers on other instances get the missed changes from the database; typing is lost', async () => {
    const [owner, member] = await newUsers(2)
    const group = await createGroup(owner!, [member!])
    const client = wsClient(a.wsUrl, member!.token)
    clients.push(client)
    const onA = subscribeWs(client, ConversationEvents, { conversationId: group.id, sincePts: group.lastPts })
    await waitForSubscriptions(a.app, member!, 1)
    const before = await sendVia(b, owner!, group.id, 'before the outage')
    await onA.waitFor(1)

    await redis.stop()
    const during = []
    for (let i = 0; i < 3; i++) during.push(await sendVia(b, owner!, group.id, `during the outage ${i}`))
    expect((await post(b.url, owner!.token, SendTyping, { id: group.id })).data).toEqual({ sendTyping: true })
    expect((await post(a.url, member!.token, Position, { id: group.id })).data!.conversation!.lastSeq).toBe(
      during.at(-1)!.seq,
    )
    expect(onA.events).toHaveLength(1)

    // Back: no further send is needed for the missed changes to arrive, in order, without the typing event.
    await redis.start()
    const received = (await onA.waitFor(4)) as Events
    expect(received.map((e) => e.conversationEvents.message?.id)).toEqual([before, ...during].map((m) => m.id))
    expect(received.map((e) => e.conversationEvents.pts)).toEqual([1, 2, 3, 4].map((i) => group.lastPts + i))
    const after = await sendVia(b, owner!, group.id, 'after the outage')
    expect(((await onA.waitFor(5)) as Events).map((e) => e.conversationEvents.message?.id).at(-1)).toBe(after.id)
    expect(onA.errors).toEqual([])
    // Told once, not once per event.
    expect(logged.filter((line) => line.startsWith('redis publish failed'))).toHaveLength(1)
    onA.dispose()
  })
})

describe('rate limits through Redis', () => {
  const send = (server: TestServer, user: TestUser, conversationId: string) =>
    post(server.url, user.token, SendMessage, {
      input: { conversationId, clientMessageId: `${Math.random()}`, content: { text: { text: 'hi' } } },
    })

  it('hold across instances, and while Redis is away each instance counts alone', async () => {
    await Promise.all(stores.filter((store) => store.status !== 'ready').map((store) => once(store, 'ready')))
    const [owner, member] = await newUsers(2)
    const group = await createGroup(owner!, [member!])
    expect([codes(await send(limitedA, owner!, group.id)), codes(await send(limitedB, owner!, group.id))]).toEqual([
      [],
      [],
    ])
    expect(codes(await send(limitedA, owner!, group.id))).toEqual(['RATE_LIMITED'])

    await redis.stop()
    try {
      // Each instance's own count starts from nothing: two more on each, then refused there.
      for (const server of [limitedA, limitedB]) {
        expect([codes(await send(server, member!, group.id)), codes(await send(server, member!, group.id))]).toEqual([
          [],
          [],
        ])
        expect(codes(await send(server, member!, group.id))).toEqual(['RATE_LIMITED'])
      }
    } finally {
      await redis.start()
    }
  })
})
