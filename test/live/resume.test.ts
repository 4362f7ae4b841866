import { describe, expect, it } from 'vitest'
import type { Parley } from '../../src/app.ts'
import type { Viewer } from '../../src/domain/core/app.ts'
import { createApp } from '../../src/app.ts'
import { openConversationEvents, type Delivery } from '../../src/domain/live/delivery.ts'
import { sendMessage } from '../../src/domain/send/sendMessage.ts'
import { messageGlobalId, parseId, parseMessageId, type MessageKey } from '../../src/domain/core/ids.ts'
import { createRealtime } from '../../src/realtime/pubsub.ts'
import { codes, newUsers, testApp, type TestUser } from '../support/harness.ts'
import { liveServer, subscribeWs, waitForSubscriptions, type Received } from '../support/server.ts'
import { EditMessage, RecallMessage } from '../support/lifecycle.ts'
import { ConversationEventBatches, ConversationEvents } from '../support/live.ts'
import { createGroup, sendText } from '../support/operations.ts'

const instance = liveServer()

type Events = Received<{
  conversationEvents: { __typename: string; kind?: string; pts?: number; message?: { id: string; status: string } }
}>

function follow(user: TestUser, conversationId: string, sincePts?: number): Events {
  return subscribeWs(instance.connect(user.token), ConversationEvents, { conversationId, sincePts })
}

const messageEvents = (stream: Events) =>
  stream.events.map((e) => e.conversationEvents).filter((e) => e.__typename === 'MessageEvent')
const viewerOf = (user: TestUser): Viewer => ({
  userId: parseId(user.id, 'User'),
  handle: user.handle,
  kind: 'HUMAN',
  isOperator: false,
})
let sent = 0
const domainSend = (app: Parley, user: TestUser, conversationId: string, text: string) =>
  sendMessage(app, viewerOf(user), {
    conversationId,
    clientMessageId: `domain-${++sent}-${Math.random()}`,
    content: { text: { text } },
  })

describe('resume with sincePts', () => {
  it('replays exactly the changes missed while away, each message once in its latest state, then goes live', async () => {
    const [owner, member] = await newUsers(2)
    const group = await createGroup(owner!, [member!])
    const first = follow(member!, group.id, group.lastPts)
    const seen1 = await sendText(owner!, group.id, 'seen 1')
    await sendText(owner!, group.id, 'seen 2')
    await first.waitFor(2)
    first.dispose()
    const lastSeen = messageEvents(first).at(-1)!.pts!

    const away1 = await sendText(owner!, group.id, 'away 1')
    const away2 = await sendText(owner!, group.id, 'away 2')
    await owner!.run(EditMessage, { messageId: away1.message.id, text: 'away 1, edited' })
    await owner!.run(RecallMessage, { messageId: seen1.message.id })

    const resumed = follow(member!, group.id, lastSeen)
    await resumed.waitFor(3)
    const live = await sendText(owner!, group.id, 'live')
    await resumed.waitFor(4)
    expect(messageEvents(resumed).map((e) => [e.kind, e.message!.id, e.pts])).toEqual([
      ['ADDED', away2.message.id, lastSeen + 2],
      ['EDITED', away1.message.id, lastSeen + 3],
      ['RECALLED', seen1.message.id, lastSeen + 4],
      ['ADDED', live.message.id, lastSeen + 5],
    ])
    resumed.dispose()
  })

  it('has no gap and no duplicate while a sender keeps sending during the replay', async () => {
    const [owner, member] = await newUsers(2)
    const group = await createGroup(owner!, [member!])
    // More than one replay page (100) is waiting when the subscriber comes back.
    const missed = await Promise.all(Array.from({ length: 110 }, (_, i) => sendText(owner!, group.id, `missed ${i}`)))
    const stream = follow(member!, group.id, group.lastPts)
    // These commit before, during and after the replay.
    const during = await Promise.all(Array.from({ length: 50 }, (_, i) => sendText(owner!, group.id, `during ${i}`)))
    const all = [...missed, ...during]
    await stream.waitFor(all.length)
    const marker = await sendText(owner!, group.id, 'marker')
    await stream.waitFor(all.length + 1)

    const events = messageEvents(stream)
    expect(events.at(-1)!.message!.id).toBe(marker.message.id)
    const received = events.slice(0, -1)
    expect(received).toHaveLength(all.length)
    expect(new Set(received.map((e) => e.message!.id))).toEqual(new Set(all.map((s) => s.message.id)))
    const pts = events.map((e) => e.pts!)
    pts.slice(1).forEach((p, i) => expect(p).toBeGreaterThan(pts[i]!))
    // Every change of the conversation since sincePts, none missing.
    expect(pts).toEqual(Array.from({ length: pts.length }, (_, i) => group.lastPts + 1 + i))
    stream.dispose()
  })

  it('in batches: a replay comes a page per payload, live events one per payload, the same changes in the same order', async () => {
    const [owner, member] = await newUsers(2)
    const group = await createGroup(owner!, [member!])
    const missed = await Promise.all(Array.from({ length: 150 }, (_, i) => sendText(owner!, group.id, `missed ${i}`)))
    const batches = subscribeWs(instance.connect(member!.token), ConversationEventBatches, {
      conversationId: group.id,
      sincePts: group.lastPts,
    })
    const single = follow(member!, group.id, group.lastPts)
    const replayed = await batches.waitFor(2)
    expect(replayed.map((b) => b.conversationEventBatches.events.length)).toEqual([100, 50])
    const live = await sendText(owner!, group.id, 'live')
    const [, , last] = await batches.waitFor(3)
    expect(last!.conversationEventBatches.events).toMatchObject([
      { __typename: 'MessageEvent', kind: 'ADDED', message: { id: live.message.id } },
    ])

    await single.waitFor(missed.length + 1)
    const flattened = batches.events.flatMap((b) =>
      b.conversationEventBatches.events.flatMap((e) =>
        e.__typename === 'MessageEvent' ? [[e.pts, e.message.id]] : [],
      ),
    )
    expect(flattened).toEqual(messageEvents(single).map((e) => [e.pts, e.message!.id]))
    expect(new Set(flattened.slice(0, -1).map(([, id]) => id))).toEqual(new Set(missed.map((m) => m.message.id)))
    expect(batches.errors).toEqual([])
    batches.dispose()
    single.dispose()
  })

  it('hands out a replayed page in order to overlapping next() calls, then live; return() mid-page ends it', async () => {
    const [owner, member] = await newUsers(2)
    const group = await createGroup(owner!, [member!])
    // Two replayed pages (100 and 30), each handed out as one run.
    const { app } = instance.server
    for (let i = 0; i < 13; i++)
      await Promise.all(Array.from({ length: 10 }, (_, j) => domainSend(app, owner!, group.id, `missed ${i * 10 + j}`)))
    const memberId = parseId(member!.id, 'User')
    const stream = await openConversationEvents(app, viewerOf(member!), {
      conversationId: group.id,
      sincePts: group.lastPts,
    })
    // Every next() asked at once, across both pages and into the live part: each answers the next change.
    const pending = Array.from({ length: 131 }, () => stream.next())
    const live = await sendText(owner!, group.id, 'live')
    const results = await Promise.all(pending)
    const pts = results.map((r) => ((r.value as Delivery).payload as { pts: number }).pts)
    expect(pts).toEqual(Array.from({ length: 131 }, (_, i) => group.lastPts + 1 + i))
    expect(messageGlobalId(((results.at(-1)!.value as Delivery).payload as { message: MessageKey }).message)).toBe(
      live.message.id,
    )

    const again = await openConversationEvents(app, viewerOf(member!), {
      conversationId: group.id,
      sincePts: group.lastPts,
    })
    expect(((await again.next()).value as Delivery).payload).toMatchObject({
      typename: 'MessageEvent',
      pts: group.lastPts + 1,
    })
    await again.return?.()
    expect((await again.next()).done).toBe(true)
    // return() while the first page is still being read: nothing of it comes after.
    const returned = await openConversationEvents(app, viewerOf(member!), {
      conversationId: group.id,
      sincePts: group.lastPts,
    })
    const reading = returned.next()
    await returned.return?.()
    await reading
    expect((await returned.next()).done).toBe(true)
    await stream.return?.()
    expect(app.hub.stats(memberId).subscriptions).toBe(0)
  })

  it('writes node ids and DateTimes as over HTTP, DateTimes as the stored instant in ISO form, in replayed events', async () => {
    const [owner] = await newUsers(1)
    const group = await createGroup(owner!, [])
    const sent = await sendText(owner!, group.id, 'dated')
    await owner!.run(EditMessage, { messageId: sent.message.id, text: 'dated, edited' })
    const stream = subscribeWs<
      {
        conversationEvents: {
          message: {
            id: string
            sender: { id: string }
            conversation: { id: string }
            sentAt: string
            editedAt: string
            recalledAt: null
          }
        }
      },
      { id: string; since: number }
    >(
      instance.connect(owner!.token),
      `subscription Dated($id: ID!, $since: SafeInt) { conversationEvents(conversationId: $id, sincePts: $since) { ... on MessageEvent { message { id sender { id } conversation { id } sentAt editedAt recalledAt } } } }`,
      { id: group.id, since: group.lastPts },
    )
    const [event] = await stream.waitFor(1)
    stream.dispose()
    const { seq } = parseMessageId(sent.message.id)
    const [stored] = await testApp().db.$queryRaw<
      { sent_at: Date; edited_at: Date }[]
    >`SELECT sent_at, edited_at FROM messages WHERE conversation_id = ${parseId(group.id, 'Conversation')} AND seq = ${seq}`
    expect(event!.conversationEvents.message).toEqual({
      id: sent.message.id,
      sender: { id: owner!.id },
      conversation: { id: group.id },
      sentAt: stored!.sent_at.toISOString(),
      editedAt: stored!.edited_at.toISOString(),
      recalledAt: null,
    })
    expect(sent.message.id).toBe(messageGlobalId({ conversationId: parseId(group.id, 'Conversation'), seq }))
    expect(sent.message.sentAt).toBe(stored!.sent_at.toISOString())
    expect(sent.message.sentAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
  })

  it('gives each replayed message its own sender, with three senders interleaved across three pages', async () => {
    const users = await newUsers(3)
    const group = await createGroup(users[0]!, users.slice(1))
    // Three pages (100 each), the senders interleaved so every page holds all three.
    const sent: [string, string][] = []
    for (let i = 0; i < 230; i += 10) {
      const batch = await Promise.all(
        Array.from({ length: 10 }, (_, j) => users[(i + j) % 3]!).map(
          async (u) => [(await sendText(u, group.id, 'from ' + u.handle)).message.id, u.handle] as [string, string],
        ),
      )
      sent.push(...batch)
    }
    const resumed = follow(users[1]!, group.id, group.lastPts)
    await resumed.waitFor(230)
    resumed.dispose()
    const senderOf = new Map(sent)
    const replayed = (messageEvents(resumed) as { message?: { id: string; sender?: { handle: string } } }[]).map(
      (e) => [e.message!.id, e.message!.sender!.handle],
    )
    expect(replayed).toHaveLength(230)
    expect(replayed).toEqual(replayed.map(([id]) => [id, senderOf.get(id!)]))
    expect(new Set(replayed.map(([, handle]) => handle)).size).toBe(3)
  })

  it('delivers a committed change whose event never arrived, in order, from the database', async () => {
    const [owner, member] = await newUsers(2)
    const group = await createGroup(owner!, [member!])
    const stream = follow(member!, group.id, group.lastPts)
    await waitForSubscriptions(instance.server.app, member!, 1)
    // Committed, but its event is lost (as when an instance dies between commit and publish).
    const app = testApp().app
    const lost = await domainSend(
      { ...app, realtime: { ...app.realtime, publish: async () => false } },
      owner!,
      group.id,
      'lost event',
    )
    const next = await sendText(owner!, group.id, 'published')
    await stream.waitFor(2)
    expect(messageEvents(stream).map((e) => [e.message!.id, e.pts])).toEqual([
      [messageGlobalId(lost.message), lost.message.pts],
      [next.message.id, next.message.pts],
    ])
    stream.dispose()
  })

  it('refuses a sincePts ahead of the conversation or negative', async () => {
    const [owner] = await newUsers(1)
    const group = await createGroup(owner!, [])
    for (const sincePts of [group.lastPts + 1, -1]) {
      const stream = follow(owner!, group.id, sincePts)
      await stream.ended()
      expect(stream.errors.map((e) => e.extensions?.code)).toEqual(['BAD_USER_INPUT'])
    }
  })
})

describe.sequential('resync limit', () => {
  it('answers RESYNC_REQUIRED past settings.resyncLimit changes, and replays up to it', async () => {
    const settings = testApp().app.settings
    const [owner, member] = await newUsers(2)
    const group = await createGroup(owner!, [member!])
    for (let i = 0; i < 6; i++) await sendText(owner!, group.id, `m${i}`)
    const limit = settings.resyncLimit
    settings.resyncLimit = 5
    try {
      const tooFar = follow(member!, group.id, group.lastPts)
      await tooFar.ended()
      expect(tooFar.errors.map((e) => e.extensions?.code)).toEqual(['RESYNC_REQUIRED'])
      expect(tooFar.events).toEqual([])
      const withinLimit = follow(member!, group.id, group.lastPts + 1)
      expect((await withinLimit.waitFor(5)).map((e) => e.conversationEvents.pts)).toEqual(
        [2, 3, 4, 5, 6].map((i) => group.lastPts + i),
      )
      withinLimit.dispose()
    } finally {
      settings.resyncLimit = limit
    }
  })
})

describe('slow consumers', () => {
  it('ends a subscription that stops reading with RESYNC_REQUIRED past its buffer, frees it, and resume gets everything', async () => {
    const [owner, member] = await newUsers(2)
    const group = await createGroup(owner!, [member!])
    // An instance whose subscriptions hold at most 3 waiting events.
    const { db, settings } = testApp().app
    const app = createApp({ db, settings, realtime: createRealtime({ subscriberBuffer: 3 }) })
    const memberId = parseId(member!.id, 'User')
    const stream = await openConversationEvents(app, viewerOf(member!), { conversationId: group.id })
    expect(app.hub.stats(memberId)).toMatchObject({ subscriptions: 1, conversationTopics: 1, userTopics: 1 })

    // Nobody reads the stream while four messages go out.
    const texts = ['a', 'b', 'c', 'd']
    for (const text of texts) await domainSend(app, owner!, group.id, text)
    expect(app.hub.stats()).toMatchObject({ conversationTopics: 0, userTopics: 0 })

    const ended = await stream.next()
    expect((ended.value as Delivery).payload).toMatchObject({
      typename: 'Error',
      error: { extensions: { code: 'RESYNC_REQUIRED' } },
    })
    expect((await stream.next()).done).toBe(true)
    expect(app.hub.stats().subscriptions).toBe(0)

    // Resuming from where it was replays all four.
    const resumed = await openConversationEvents(app, viewerOf(member!), {
      conversationId: group.id,
      sincePts: group.lastPts,
    })
    const replayed: string[] = []
    for (let i = 0; i < texts.length; i++) {
      const { payload } = (await resumed.next()).value as Delivery
      if (payload.typename === 'MessageEvent') replayed.push((payload.message.content as { text: string }).text)
    }
    expect(replayed).toEqual(texts)
    await resumed.return?.()
    expect(app.hub.stats().subscriptions).toBe(0)
  })

  it('stops listening when a client unsubscribes', async () => {
    const [owner, member] = await newUsers(2)
    const group = await createGroup(owner!, [member!])
    const stream = follow(member!, group.id)
    await waitForSubscriptions(instance.server.app, member!, 1)
    stream.dispose()
    await waitForSubscriptions(instance.server.app, member!, 0)
    expect(codes({ errors: stream.errors })).toEqual([])
  })
})
