import type { ResultOf } from '@graphql-typed-document-node/core'
import type { Client } from 'graphql-ws'
import { describe, expect, it } from 'vitest'
import type WebSocket from 'ws'
import { newUsers, type TestUser } from '../support/harness.ts'
import { SetFavorite } from '../support/lifecycle.ts'
import { createGroup, RemoveMember } from '../support/operations.ts'
import { seededRandom as random } from '../support/random.ts'
import { SaveDraft } from '../support/settings.ts'
import {
  post,
  sendVia,
  subscribeWs,
  testRedisUrl,
  twoInstances,
  waitForSubscriptions,
  type TestServer,
} from '../support/server.ts'
import { FreshState, Sync, SyncToken, ViewerUpdates } from '../support/sync.ts'

/** Subscription.viewerUpdates on two instances sharing one database and (with TEST_REDIS_URL) Redis. */
const instances = twoInstances()

/** A client whose socket the test can cut without a close handshake (once it is connected). */
function connect(server: TestServer, user: TestUser): { client: Client; cut(): Promise<void> } {
  let connected!: (socket: WebSocket) => void
  const socket = new Promise<WebSocket>((resolve) => (connected = resolve))
  const client = instances.connect(server, user.token, { on: { connected: (s) => connected(s as WebSocket) } })
  return { client, cut: async () => (await socket).terminate() }
}

const send = (server: TestServer, user: TestUser, conversationId: string) => sendVia(server, user, conversationId, 'hi')

type Update = ResultOf<typeof ViewerUpdates>
type ViewerEvent = Update['viewerUpdates']['event']

describe(`viewerUpdates (instances through ${testRedisUrl ? 'Redis' : 'a shared in-process target'})`, () => {
  it('with since: the difference first, then live events; a removal ends that conversation at once', async () => {
    const [viewer, owner] = (await newUsers(2)) as [TestUser, TestUser]
    const [kept, left] = [await createGroup(owner, [viewer]), await createGroup(owner, [viewer])]
    const since = (await viewer.run(SyncToken)).viewer.syncToken
    const missed = await send(instances.a, owner, kept.id)
    await viewer.run(SetFavorite, { messageId: missed.id, favorite: true })
    await owner.run(RemoveMember, { conversationId: left.id, userId: viewer.id })

    const updates = subscribeWs(connect(instances.b, viewer).client, ViewerUpdates, { since })
    await updates.waitFor(3)
    await waitForSubscriptions(instances.b.app, viewer, 1)
    expect(updates.events.map((u) => u.viewerUpdates.event)).toEqual([
      { __typename: 'ConversationUpdatedEvent', conversation: { id: kept.id, lastPts: missed.pts } },
      { __typename: 'MessageActionEvent', messageId: missed.id, deletedForMe: false, favorite: true, remindAt: null },
      { __typename: 'ConversationRemovedEvent', conversationId: left.id },
    ])
    await send(instances.a, owner, left.id)
    const live = await send(instances.a, owner, kept.id)
    await updates.waitFor(4)
    expect(updates.events.slice(3).map((u) => u.viewerUpdates.event)).toEqual([
      {
        __typename: 'MessageEvent',
        kind: 'ADDED',
        pts: live.pts,
        message: { id: live.id, conversation: { id: kept.id } },
      },
    ])
    updates.dispose()
  })

  it('without since starts now; a live payload’s token is a sync token that repeats nothing and misses nothing', async () => {
    const [viewer, owner] = (await newUsers(2)) as [TestUser, TestUser]
    const [first, second] = [await createGroup(owner, [viewer]), await createGroup(owner, [viewer])]
    await send(instances.a, owner, first.id)
    const updates = subscribeWs(connect(instances.a, viewer).client, ViewerUpdates, {})
    await waitForSubscriptions(instances.a.app, viewer, 1)
    const live = await send(instances.b, owner, first.id)
    const [update] = await updates.waitFor(1)
    expect(update!.viewerUpdates.event).toMatchObject({ __typename: 'MessageEvent', pts: live.pts })
    updates.dispose()
    // The token knows the live message (a floor), not what came after it.
    const later = await send(instances.b, owner, second.id)
    const { sync } = await viewer.run(Sync, { since: update!.viewerUpdates.token })
    expect(sync.conversations.map((c) => [c.id, c.lastPts])).toEqual([[second.id, later.pts]])
  })

  it('carries a draft saved on another device as a ConversationUpdatedEvent whose token syncs nothing more', async () => {
    const [viewer, owner] = (await newUsers(2)) as [TestUser, TestUser]
    const group = await createGroup(owner, [viewer])
    const updates = subscribeWs(connect(instances.a, viewer).client, ViewerUpdates, {})
    await waitForSubscriptions(instances.a.app, viewer, 1)
    expect(
      (await post(instances.b.url, viewer.token, SaveDraft, { id: group.id, draft: { text: 'from the laptop' } }))
        .errors,
    ).toBeUndefined()
    const [update] = await updates.waitFor(1)
    expect(update!.viewerUpdates.event).toMatchObject({
      __typename: 'ConversationUpdatedEvent',
      conversation: { id: group.id },
    })
    updates.dispose()
    const { sync } = await viewer.run(Sync, { since: update!.viewerUpdates.token })
    expect(sync).toMatchObject({ token: update!.viewerUpdates.token, conversations: [] })
  })

  it('resumed after abrupt disconnects, alternating instances while writers run, delivers every change exactly once', async () => {
    const rnd = random(15)
    const [viewer, x, y] = (await newUsers(3)) as [TestUser, TestUser, TestUser]
    const groups = [
      await createGroup(x, [viewer, y]),
      await createGroup(y, [viewer, x]),
      await createGroup(x, [viewer, y]),
    ].map((g) => g.id)
    const { viewer: start } = await viewer.run(FreshState)
    const known = new Map(start.conversations.edges.map((e) => [e.node.id, e.node.lastPts]))
    const favourited = new Map<string, number>()
    const sent: string[] = []

    let writing = true
    const writers = [x, y, viewer].map(async (user, i) => {
      while (writing) {
        const server = rnd.chance(0.5) ? instances.a : instances.b
        if (user === viewer) {
          const id = sent.find((m) => !favourited.has(m))
          if (id) {
            favourited.set(id, 0)
            const response = await post(server.url, viewer.token, SetFavorite, { messageId: id, favorite: true })
            if (response.errors) throw new Error(JSON.stringify(response.errors))
          }
        } else sent.push((await send(server, user, groups[(i + rnd.int(2)) % 3]!)).id)
        await new Promise((resolve) => setTimeout(resolve, user === viewer ? 40 + rnd.int(40) : rnd.int(15)))
      }
    })

    /** Checks one event against what the device knew: nothing repeated, nothing skipped. */
    const apply = (event: ViewerEvent) => {
      if (event.__typename === 'MessageEvent') {
        const id = event.message.conversation.id
        expect(event.pts, `MessageEvent in ${id}`).toBe(known.get(id)! + 1)
        known.set(id, event.pts)
      } else if (event.__typename === 'ConversationUpdatedEvent') {
        expect(event.conversation.lastPts).toBeGreaterThan(known.get(event.conversation.id)!)
        known.set(event.conversation.id, event.conversation.lastPts)
      } else if (event.__typename === 'MessageActionEvent') {
        favourited.set(event.messageId, favourited.get(event.messageId)! + 1)
      }
    }

    let token = start.syncToken
    const session = async (server: TestServer, until: (events: Update[]) => boolean) => {
      const { client, cut } = connect(server, viewer)
      const updates = subscribeWs(client, ViewerUpdates, { since: token })
      await updates.waitUntil(until)
      await cut()
      await updates.ended()
      for (const u of updates.events) apply(u.viewerUpdates.event)
      if (updates.events.length) token = updates.events.at(-1)!.viewerUpdates.token
      return updates.events.length
    }
    let delivered = 0
    for (let i = 0; i < 10; i++)
      delivered += await session(i % 2 ? instances.a : instances.b, (events) => events.length >= 4 + rnd.int(8))
    writing = false
    await Promise.all(writers)

    const final = (await viewer.run(FreshState)).viewer
    const done = () =>
      final.conversations.edges.every((e) => known.get(e.node.id) === e.node.lastPts) &&
      [...favourited.values()].every((n) => n === 1)
    // The last session catches up on what the cuts left unsent; its events are checked like the others.
    const caughtUp = (events: Update[]) => {
      const before = new Map(known)
      const counts = new Map(favourited)
      for (const u of events) apply(u.viewerUpdates.event)
      const ok = done()
      for (const [k, v] of before) known.set(k, v)
      for (const [k, v] of counts) favourited.set(k, v)
      return ok
    }
    delivered += await session(instances.a, caughtUp)
    expect(done(), JSON.stringify({ known: [...known], final: final.conversations.edges.map((e) => e.node) })).toBe(
      true,
    )
    expect(delivered).toBeGreaterThan(20)
  }, 60_000)
})
