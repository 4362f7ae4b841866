import type { Client } from 'graphql-ws'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { newUsers, type TestUser } from '../support/harness.ts'
import { OpenPrivate } from '../support/operations.ts'
import { PresenceEvents, SetPresenceVisible, UserPresence } from '../support/push.ts'
import { post, startInstance, subscribeWs, waitForSubscriptions, wsClient, type TestServer } from '../support/server.ts'
import { createRealtime } from '../../src/realtime/pubsub.ts'

/** Presence on one instance: online while a live subscription is open, last seen, who may see it, PresenceEvents. */

let server: TestServer
const clients: Client[] = []
beforeAll(async () => {
  server = await startInstance(createRealtime(), { settings: { presenceDebounceMs: 1000 } })
})
afterAll(async () => {
  await Promise.all(clients.map((c) => Promise.resolve(c.dispose())))
  await server.close()
})

function connect(user: TestUser): Client {
  const client = wsClient(server.wsUrl, user.token)
  clients.push(client)
  return client
}

async function presenceOf(viewer: TestUser, user: TestUser) {
  const response = await post(server.url, viewer.token, UserPresence, { id: user.id })
  expect(response.errors).toBeUndefined()
  return (response.data!.node as { presence: { online: boolean; lastSeenAt: string | null } | null }).presence
}

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + 10_000
  for (;;) {
    const value = await read()
    if (done(value) || Date.now() > deadline) return value
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

type Heard = { user: { id: string }; online: boolean; lastSeenAt: string | null }
const presenceEvents = (events: { inboxEvents: { __typename: string } }[]): Heard[] =>
  events.flatMap(({ inboxEvents: { __typename, ...e } }) => (__typename === 'PresenceEvent' ? [e as Heard] : []))

describe('presence', () => {
  it('is online while a subscription is open, then offline with lastSeenAt; a PRIVATE-chat peer hears each change', async () => {
    const [alice, bob, stranger] = await newUsers(3)
    await alice!.run(OpenPrivate, { userId: bob!.id })
    expect(await presenceOf(bob!, alice!)).toEqual({ online: false, lastSeenAt: null })
    expect(await presenceOf(stranger!, alice!)).toBeNull()

    const heard = subscribeWs(connect(bob!), PresenceEvents)
    await waitForSubscriptions(server.app, bob!, 1)
    const client = connect(alice!)
    const hers = subscribeWs(client, PresenceEvents)
    await waitForSubscriptions(server.app, alice!, 1)
    expect(await presenceOf(bob!, alice!)).toEqual({ online: true, lastSeenAt: null })
    expect(presenceEvents(await heard.waitFor(1))).toEqual([
      { user: { id: alice!.id }, online: true, lastSeenAt: null },
    ])

    const before = Date.now()
    hers.dispose()
    // The registry's leave and the last-seen write run side by side (tracker.disconnected): for a
    // moment a read may find her offline before lastSeenAt is stored.
    const offline = await until(
      () => presenceOf(bob!, alice!),
      (p) => p?.online === false && p.lastSeenAt !== null,
    )
    expect(offline!.online).toBe(false)
    expect(Date.parse(offline!.lastSeenAt!)).toBeGreaterThanOrEqual(before - 1000)
    const events = presenceEvents(await heard.waitFor(2))
    expect(events[1]).toEqual({ user: { id: alice!.id }, online: false, lastSeenAt: offline!.lastSeenAt })
    heard.dispose()
  })

  it('hides a user who set presenceVisible false (null for everyone, no events) while they still see others', async () => {
    const [alice, bob, carol] = await newUsers(3)
    await alice!.run(OpenPrivate, { userId: bob!.id })
    await carol!.run(OpenPrivate, { userId: bob!.id })
    expect((await alice!.run(SetPresenceVisible, { visible: false })).setPresenceVisible.presenceVisible).toBe(false)
    const heard = subscribeWs(connect(bob!), PresenceEvents)
    await waitForSubscriptions(server.app, bob!, 1)

    const hers = subscribeWs(connect(alice!), PresenceEvents)
    await waitForSubscriptions(server.app, alice!, 1)
    expect(await presenceOf(bob!, alice!)).toBeNull()
    expect(await presenceOf(alice!, bob!)).toEqual({ online: true, lastSeenAt: null })
    // Carol is visible: her change is the first event Bob hears, although Alice came online first.
    const carols = subscribeWs(connect(carol!), PresenceEvents)
    await waitForSubscriptions(server.app, carol!, 1)
    expect(presenceEvents(await heard.waitFor(1))).toEqual([
      { user: { id: carol!.id }, online: true, lastSeenAt: null },
    ])
    hers.dispose()
    carols.dispose()
    heard.dispose()
  })

  it('debounces a flapping connection: five quick reconnects end where they began and announce nothing', async () => {
    const [alice, bob, carol] = await newUsers(3)
    await alice!.run(OpenPrivate, { userId: bob!.id })
    await carol!.run(OpenPrivate, { userId: bob!.id })
    const heard = subscribeWs(connect(bob!), PresenceEvents)
    await waitForSubscriptions(server.app, bob!, 1)
    for (let i = 0; i < 5; i++) {
      const flap = subscribeWs(connect(alice!), PresenceEvents)
      await waitForSubscriptions(server.app, alice!, 1)
      flap.dispose()
      await waitForSubscriptions(server.app, alice!, 0)
    }
    await new Promise((resolve) => setTimeout(resolve, 1200))
    const carols = subscribeWs(connect(carol!), PresenceEvents)
    await waitForSubscriptions(server.app, carol!, 1)
    expect(presenceEvents(await heard.waitFor(1)).map((e) => e.user.id)).toEqual([carol!.id])
    carols.dispose()
    heard.dispose()
  })
})
