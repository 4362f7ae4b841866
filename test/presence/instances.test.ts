import { inject } from 'vitest'
import type { Client } from 'graphql-ws'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { newUsers, type TestUser } from '../support/harness.ts'
import { OpenPrivate } from '../support/operations.ts'
import { PresenceEvents, UserPresence } from '../support/push.ts'
import { ownRedis } from '../support/redis.ts'
import {
  post,
  spawnInstance,
  startInstance,
  subscribeWs,
  waitForSubscriptions,
  wsClient,
  type TestServer,
} from '../support/server.ts'
import { createRedisPresence } from '../../src/realtime/presence.ts'
import { createRedisRealtime } from '../../src/realtime/redis.ts'

/** Presence across instances through a Redis of the test's own: several servers, and one killed. */

const TTL_MS = 1500
const redis = await ownRedis()
let a: TestServer
let b: TestServer
const clients: Client[] = []
const cleanup: (() => unknown)[] = []
beforeAll(async () => {
  const instance = () =>
    startInstance(createRedisRealtime(redis.url), {
      settings: { presenceDebounceMs: 200 },
      presence: createRedisPresence(redis.url, { ttlMs: TTL_MS }),
    })
  ;[a, b] = await Promise.all([instance(), instance()])
})
afterAll(async () => {
  await Promise.all(clients.map((c) => Promise.resolve(c.dispose())))
  await Promise.all([a.close(), b.close(), ...cleanup.map((c) => c())])
})

function connect(url: string, user: TestUser): Client {
  const client = wsClient(url, user.token)
  clients.push(client)
  return client
}

async function presenceOf(server: TestServer, viewer: TestUser, user: TestUser) {
  const response = await post(server.url, viewer.token, UserPresence, { id: user.id })
  return (response.data!.node as { presence: { online: boolean; lastSeenAt: string | null } | null }).presence
}

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, limitMs = 10_000): Promise<T> {
  const deadline = Date.now() + limitMs
  for (;;) {
    const value = await read()
    if (done(value) || Date.now() > deadline) return value
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

const onlineFlags = (events: { inboxEvents: { __typename: string; online?: boolean } }[]) =>
  events.filter((e) => e.inboxEvents.__typename === 'PresenceEvent').map((e) => e.inboxEvents.online)

describe('presence across instances (Redis)', () => {
  it('is online on B while the user holds a subscription on A, and offline once it closes; B’s subscribers hear both', async () => {
    const [alice, bob] = await newUsers(2)
    await alice!.run(OpenPrivate, { userId: bob!.id })
    const heard = subscribeWs(connect(b.wsUrl, bob!), PresenceEvents)
    await waitForSubscriptions(b.app, bob!, 1)
    const hers = subscribeWs(connect(a.wsUrl, alice!), PresenceEvents)
    await waitForSubscriptions(a.app, alice!, 1)
    expect(await presenceOf(b, bob!, alice!)).toEqual({ online: true, lastSeenAt: null })
    expect(onlineFlags(await heard.waitFor(1))).toEqual([true])

    // A second subscription on B, then the one on A closes: still online (B holds one).
    const second = subscribeWs(connect(b.wsUrl, alice!), PresenceEvents)
    await waitForSubscriptions(b.app, alice!, 1)
    hers.dispose()
    await waitForSubscriptions(a.app, alice!, 0)
    await new Promise((resolve) => setTimeout(resolve, 500))
    expect((await presenceOf(a, bob!, alice!))?.online).toBe(true)
    second.dispose()
    const offline = await until(
      () => presenceOf(a, bob!, alice!),
      (p) => p?.online === false,
    )
    expect(offline).toMatchObject({ online: false, lastSeenAt: expect.any(String) })
    expect(onlineFlags(await heard.waitFor(2))).toEqual([true, false])
    heard.dispose()
  })

  it('takes a killed instance’s users offline within the heartbeat window, and announces it', async () => {
    const [alice, bob] = await newUsers(2)
    await alice!.run(OpenPrivate, { userId: bob!.id })
    const heard = subscribeWs(connect(a.wsUrl, bob!), PresenceEvents)
    await waitForSubscriptions(a.app, bob!, 1)
    const doomed = await spawnInstance({
      DATABASE_URL: inject('databaseUrl'),
      REDIS_URL: redis.url,
      PRESENCE_TTL_MS: String(TTL_MS),
    })
    cleanup.push(() => doomed.child.kill('SIGKILL'))
    subscribeWs(connect(doomed.wsUrl, alice!), PresenceEvents)
    await until(
      () => presenceOf(a, bob!, alice!),
      (p) => p?.online === true,
    )
    expect(await presenceOf(a, bob!, alice!)).toEqual({ online: true, lastSeenAt: null })
    // Announced by the doomed instance once settled (2 s there).
    expect(onlineFlags(await heard.waitFor(1))).toEqual([true])

    doomed.child.kill('SIGKILL')
    await doomed.exited
    const killedAt = Date.now()
    const offline = await until(
      () => presenceOf(a, bob!, alice!),
      (p) => p?.online === false,
      TTL_MS * 4,
    )
    expect(offline?.online).toBe(false)
    expect(Date.now() - killedAt).toBeLessThan(TTL_MS + 3000)
    // Nobody closed her subscription: a live instance's sweep finds the dead one and announces it.
    expect(onlineFlags(await heard.waitFor(2))).toEqual([true, false])
    expect((await presenceOf(a, bob!, alice!))?.lastSeenAt).toEqual(expect.any(String))
    heard.dispose()
  })
})
