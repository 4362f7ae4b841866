import type { Client } from 'graphql-ws'
import WebSocket from 'ws'
import { parseId } from '../../src/domain/core/ids.ts'
import { describe, expect, it, vi } from 'vitest'
import { signToken } from '../../src/http/auth/hs256.ts'
import { AUTH_SECRET, countStatements, newUser, newUsers, testApp, type TestUser } from '../support/harness.ts'
import { createRealtime } from '../../src/realtime/pubsub.ts'
import {
  liveServer,
  post,
  startInstance,
  subscribeSse,
  subscribeWs,
  waitForSubscriptions,
  wsClient,
} from '../support/server.ts'
import { DeleteForMe, EditMessage, RecallMessage, SetFavorite } from '../support/lifecycle.ts'
import {
  ConversationEventBatches,
  ConversationEvents,
  InboxEvents,
  Position,
  RenamedConversationEvents,
  SendTyping,
  textOf,
} from '../support/live.ts'
import { AddMembers, createGroup, MarkRead, RemoveMember, SendMessage, sendText } from '../support/operations.ts'

// Variable names unlike the argument names, and a literal: the subscribe resolver must get the field's arguments.
const instance = liveServer()
const connect = (user: TestUser): Client => instance.connect(user.token)

const lastPtsOf = async (user: TestUser, id: string) => (await user.run(Position, { id })).conversation!.lastPts

/**
 * A conversation stream from the conversation's current position, open when this resolves: every change
 * after arrives live, one event each. (A change made while it opens would come once in its latest state.)
 */
async function follow(user: TestUser, conversationId: string) {
  const open = instance.server.app.hub.stats(parseId(user.id, 'User')).subscriptions
  const stream = subscribeWs(connect(user), ConversationEvents, {
    conversationId,
    sincePts: await lastPtsOf(user, conversationId),
  })
  await waitForSubscriptions(instance.server.app, user, open + 1)
  return stream
}

describe('conversationEvents', () => {
  it('delivers ADDED, EDITED and RECALLED in pts order with each message as it now is', async () => {
    const [owner, member] = await newUsers(2)
    const group = await createGroup(owner!, [member!])
    const stream = await follow(member!, group.id)
    const first = await sendText(owner!, group.id, 'one')
    const second = await sendText(owner!, group.id, 'two')
    await owner!.run(EditMessage, { messageId: first.message.id, text: 'one, edited' })
    await owner!.run(RecallMessage, { messageId: second.message.id })

    const events = await stream.waitFor(4)
    expect(events.map((e) => e.conversationEvents)).toMatchObject([
      {
        __typename: 'MessageEvent',
        kind: 'ADDED',
        message: { id: first.message.id, sender: { id: owner!.id }, conversation: { id: group.id } },
      },
      { __typename: 'MessageEvent', kind: 'ADDED', message: { id: second.message.id } },
      {
        __typename: 'MessageEvent',
        kind: 'EDITED',
        message: { id: first.message.id, status: 'EDITED', content: { text: 'one, edited' } },
      },
      {
        __typename: 'MessageEvent',
        kind: 'RECALLED',
        message: { id: second.message.id, status: 'RECALLED', content: null },
      },
    ])
    const pts = events.map((e) => (e.conversationEvents.__typename === 'MessageEvent' ? e.conversationEvents.pts : 0))
    expect(pts).toEqual([group.lastPts + 1, group.lastPts + 2, group.lastPts + 3, group.lastPts + 4])
    expect(stream.errors).toEqual([])
    stream.dispose()
  })

  it("takes the field's arguments whatever the variables are called, and literal arguments", async () => {
    const [owner, member] = await newUsers(2)
    const group = await createGroup(owner!, [member!])
    await sendText(owner!, group.id, 'replayed')
    const stream = subscribeWs(connect(member!), RenamedConversationEvents, { conversation: group.id })
    const replayed = await stream.waitFor(group.lastPts + 1)
    expect(replayed.at(-1)!.conversationEvents).toMatchObject({ message: { content: { text: 'replayed' } } })
    expect(stream.errors).toEqual([])
    stream.dispose()
  })

  it('refuses a non-member with NOT_FOUND and a socket without a valid token at connect', async () => {
    const [owner, member, stranger] = await newUsers(3)
    const group = await createGroup(owner!, [member!])
    const refused = subscribeWs(connect(stranger!), ConversationEvents, { conversationId: group.id, sincePts: 0 })
    await refused.ended()
    expect(refused.errors.map((e) => e.extensions?.code)).toEqual(['NOT_FOUND'])
    expect(refused.events).toEqual([])

    const malformed = subscribeWs(connect(member!), ConversationEvents, { conversationId: 'nope', sincePts: 0 })
    await malformed.ended()
    expect(malformed.errors.map((e) => e.extensions?.code)).toEqual(['BAD_USER_INPUT'])

    for (const authorization of ['Bearer not-a-token', undefined]) {
      const socket = new WebSocket(instance.server.wsUrl, 'graphql-transport-ws')
      await new Promise((resolve) => socket.once('open', resolve))
      const closed = new Promise<number>((resolve) => socket.once('close', (code) => resolve(code)))
      socket.send(JSON.stringify({ type: 'connection_init', payload: authorization ? { authorization } : {} }))
      expect(await closed).toBe(4403)
    }
  })

  it('lives as long as its token: at exp the socket closes with 4403 and its streams end, over SSE too', async () => {
    const [owner, member] = await newUsers(2)
    const group = await createGroup(owner!, [member!])
    const shortLived = await signToken(AUTH_SECRET, member!.handle, { expiresIn: '3s' })
    const closes: number[] = []
    const client = wsClient(instance.server.wsUrl, shortLived, {
      on: { closed: (event) => void closes.push((event as { code: number }).code) },
    })
    try {
      const overWs = subscribeWs(client, ConversationEvents, { conversationId: group.id })
      const overSse = subscribeSse(instance.server.url, shortLived, ConversationEvents, { conversationId: group.id })
      await waitForSubscriptions(instance.server.app, member!, 2)
      await sendText(owner!, group.id, 'while the token is good')
      await overWs.waitFor(1)
      await overSse.waitFor(1)
      // Both end at exp, with no event lost before it and no request made by the client.
      await Promise.all([overWs.ended(), overSse.ended()])
      // The subscription may end (complete) a moment before the socket's close reaches the client.
      await vi.waitFor(() => expect(closes).toEqual([4403]), { timeout: 5_000, interval: 20 })
      expect(overSse.errors).toEqual([])
      expect(overWs.events).toHaveLength(1)
      expect(overSse.events).toHaveLength(1)
      // Back with the expired token: refused at connect; every subscribe would fail the same way.
      const again = wsClient(instance.server.wsUrl, shortLived)
      const refused = subscribeWs(again, ConversationEvents, { conversationId: group.id })
      await refused.ended()
      expect(refused.errors.length).toBeGreaterThan(0)
      await again.dispose()
    } finally {
      await client.dispose()
    }
  })

  it('shows a directed message only to its audience and a JOINED member nothing from before joining', async () => {
    const [owner, audience, other, late] = await newUsers(4)
    const group = await createGroup(owner!, [audience!, other!], 'JOINED')
    const before = await sendText(owner!, group.id, 'before the late member joined')
    await owner!.run(AddMembers, { conversationId: group.id, userIds: [late!.id] })
    // The late member replays from 0: nothing before joining, then the live stream.
    const lateStream = subscribeWs(connect(late!), ConversationEvents, { conversationId: group.id, sincePts: 0 })
    const audienceStream = await follow(audience!, group.id)
    const otherStream = await follow(other!, group.id)
    await waitForSubscriptions(instance.server.app, late!, 1)

    const directed = await owner!.run(SendMessage, {
      input: {
        conversationId: group.id,
        clientMessageId: 'directed',
        content: { text: { text: 'only for you' } },
        visibleToUserIds: [audience!.id],
      },
    })
    const everyone = await sendText(owner!, group.id, 'for everyone')

    const seen = async (
      stream: ReturnType<typeof subscribeWs<{ conversationEvents: { __typename: string } }, never>>,
      count: number,
    ) => (await stream.waitFor(count)).map((e) => (e.conversationEvents as { message?: { id: string } }).message?.id)
    expect(await seen(audienceStream, 2)).toEqual([directed.sendMessage.message.id, everyone.message.id])
    expect(await seen(otherStream, 1)).toEqual([everyone.message.id])
    const lateIds = await seen(lateStream, 2) // the MEMBERS_ADDED system message, then the broadcast
    expect(lateIds).not.toContain(before.message.id)
    expect(lateIds).not.toContain(directed.sendMessage.message.id)
    expect(lateIds[1]).toBe(everyone.message.id)
    for (const s of [lateStream, audienceStream, otherStream]) s.dispose()
  })

  it('delivers typing to the other members, once per interval, and stores nothing', async () => {
    const [typist, reader, stranger] = await newUsers(3)
    const group = await createGroup(typist!, [reader!])
    const before = (await typist!.run(Position, { id: group.id })).conversation!
    const readerStream = await follow(reader!, group.id)
    const ownStream = await follow(typist!, group.id)

    expect((await typist!.run(SendTyping, { id: group.id })).sendTyping).toBe(true)
    // Within the interval: answered true, nothing published.
    expect((await typist!.run(SendTyping, { id: group.id })).sendTyping).toBe(true)
    expect((await stranger!.try(SendTyping, { id: group.id })).errors?.map((e) => e.extensions?.code)).toEqual([
      'NOT_FOUND',
    ])
    expect((await typist!.run(Position, { id: group.id })).conversation).toEqual(before)
    // A message after the typing calls: everything before it in the stream is what typing published.
    const sent = await sendText(typist!, group.id, 'typed')

    const events = (await readerStream.waitFor(2)).map((e) => e.conversationEvents)
    expect(events).toMatchObject([
      { __typename: 'TypingEvent', conversationId: group.id, user: { id: typist!.id } },
      { __typename: 'MessageEvent' },
    ])
    const typing = events[0] as { expiresAt: string }
    expect(new Date(typing.expiresAt).getTime()).toBeGreaterThan(Date.now())
    // The typist's own stream has the message only.
    expect((await ownStream.waitFor(1)).map((e) => e.conversationEvents.__typename)).toEqual(['MessageEvent'])
    expect((await typist!.run(Position, { id: group.id })).conversation!.lastPts).toBe(sent.message.pts)
    readerStream.dispose()
    ownStream.dispose()
  })

  it('ends a removed member stream at once with NOT_FOUND, and their inbox hears no more of the group', async () => {
    const [owner, removed, stays] = await newUsers(3)
    const group = await createGroup(owner!, [removed!, stays!])
    const elsewhere = await createGroup(owner!, [removed!])
    const removedStream = await follow(removed!, group.id)
    const removedInbox = subscribeWs(connect(removed!), InboxEvents)
    const staysStream = await follow(stays!, group.id)
    await waitForSubscriptions(instance.server.app, removed!, 2)

    await owner!.run(RemoveMember, { conversationId: group.id, userId: removed!.id })
    await removedStream.ended()
    expect(removedStream.errors.map((e) => e.extensions?.code)).toEqual(['NOT_FOUND'])
    const after = await sendText(owner!, group.id, 'after the removal')
    const marker = await sendText(owner!, elsewhere.id, 'marker in another group')

    const staysEvents = await staysStream.waitFor(2) // MEMBER_REMOVED, then the message
    expect(staysEvents.map((e) => (e.conversationEvents as { message: { id: string } }).message.id)[1]).toBe(
      after.message.id,
    )
    // The marker comes after the group message on the bus; the inbox got it but not the group message.
    const inbox = await removedInbox.waitFor(1)
    const inboxIds = inbox.map((e) => (e.inboxEvents as { message?: { id: string } }).message?.id)
    expect(inboxIds).toContain(marker.message.id)
    expect(inboxIds).not.toContain(after.message.id)
    expect(
      removedStream.events.map((e) => (e.conversationEvents as { message?: { id: string } }).message?.id),
    ).not.toContain(after.message.id)
    removedInbox.dispose()
    staysStream.dispose()
  })
})

describe.sequential('read events', () => {
  it('go to other members when receipts are on, and only to the reader own streams when off', async () => {
    const settings = testApp().app.settings
    const [owner, reader] = await newUsers(2)
    const group = await createGroup(owner!, [reader!])
    const sent = await sendText(owner!, group.id, 'read me')
    const ownerStream = await follow(owner!, group.id)
    const readerOther = await follow(reader!, group.id)
    try {
      await reader!.run(MarkRead, { conversationId: group.id, seq: sent.message.seq - 1 })
      settings.readReceipts.group = false
      await reader!.run(MarkRead, { conversationId: group.id, seq: sent.message.seq })
    } finally {
      settings.readReceipts.group = true
    }
    const marker = await sendText(owner!, group.id, 'marker')

    const ownerEvents = (await ownerStream.waitFor(2)).map((e) => e.conversationEvents)
    expect(ownerEvents).toMatchObject([
      { __typename: 'ReadEvent', user: { id: reader!.id }, lastReadSeq: sent.message.seq - 1 },
      { __typename: 'MessageEvent', message: { id: marker.message.id } },
    ])
    const readerEvents = (await readerOther.waitFor(3)).map((e) => e.conversationEvents)
    expect(readerEvents).toMatchObject([
      { __typename: 'ReadEvent', lastReadSeq: sent.message.seq - 1 },
      { __typename: 'ReadEvent', lastReadSeq: sent.message.seq },
      { __typename: 'MessageEvent', message: { id: marker.message.id } },
    ])
    ownerStream.dispose()
    readerOther.dispose()
  })
})

describe('inboxEvents', () => {
  it('delivers messages of every conversation, a new conversation on joining and then its messages, and own actions', async () => {
    const [viewer, friend] = await newUsers(2)
    const first = await createGroup(friend!, [viewer!])
    const second = await createGroup(friend!, [viewer!])
    const inbox = subscribeWs(connect(viewer!), InboxEvents)
    await waitForSubscriptions(instance.server.app, viewer!, 1)

    const a = await sendText(friend!, first.id, 'in the first')
    const b = await sendText(friend!, second.id, 'in the second')
    await viewer!.run(SetFavorite, { messageId: a.message.id, favorite: true })
    const third = await createGroup(friend!, [viewer!], 'SHARED', 'joined later')
    const events = (await inbox.waitFor(4)).map((e) => e.inboxEvents)
    expect(events).toMatchObject([
      { __typename: 'MessageEvent', message: { id: a.message.id, conversation: { id: first.id } } },
      { __typename: 'MessageEvent', message: { id: b.message.id, conversation: { id: second.id } } },
      { __typename: 'MessageActionEvent', messageId: a.message.id, favorite: true, deletedForMe: false },
      {
        __typename: 'ConversationJoinedEvent',
        conversation: { id: third.id, title: 'joined later', viewerMember: { role: 'MEMBER' } },
      },
    ])
    const c = await sendText(friend!, third.id, 'in the joined one')
    expect((await inbox.waitFor(5))[4]!.inboxEvents).toMatchObject({
      __typename: 'MessageEvent',
      message: { id: c.message.id, content: { text: 'in the joined one' } },
    })
    expect(textOf(events[0] as never)).toBe('in the first')

    // A message deleted for the viewer still reports its state to their devices.
    await viewer!.run(DeleteForMe, { ids: [b.message.id] })
    // The reminder scheduler publishes this on the owner's topic (its firing is tested with the scheduler).
    const remindAt = new Date().toISOString()
    await testApp().app.realtime.publish([
      {
        type: 'reminderDue',
        userId: parseId(viewer!.id, 'User'),
        conversationId: parseId(first.id, 'Conversation'),
        seq: a.message.seq,
        remindAt,
      },
    ])
    expect((await inbox.waitFor(7)).slice(5).map((e) => e.inboxEvents)).toMatchObject([
      {
        __typename: 'MessageActionEvent',
        messageId: b.message.id,
        deletedForMe: true,
        favorite: false,
        remindAt: null,
      },
      { __typename: 'ReminderDueEvent', message: { id: a.message.id }, dueAt: remindAt },
    ])
    inbox.dispose()
  })
})

describe('delivery cost', () => {
  /** Statements from one send until every subscriber of the group has the event. */
  async function statementsForOneEvent(subscribers: number): Promise<number> {
    const owner = await newUser()
    const members = await newUsers(subscribers)
    const group = await createGroup(owner, members)
    // Live only (no sincePts): a replay's own read would run while the statements are counted.
    const streams = members.map((m) => subscribeWs(connect(m), ConversationEvents, { conversationId: group.id }))
    for (const m of members) await waitForSubscriptions(instance.server.app, m, 1)
    const count = await countStatements(async () => {
      await sendText(owner, group.id, 'fan out')
      await Promise.all(streams.map((s) => s.waitFor(1)))
    })
    for (const s of streams) {
      expect(s.events[0]!.conversationEvents).toMatchObject({
        __typename: 'MessageEvent',
        message: { sender: { id: owner.id }, content: { text: 'fan out' } },
      })
      s.dispose()
    }
    return count
  }

  it('costs the same statements per event for 30 subscribers as for 2', async () => {
    expect(await statementsForOneEvent(30)).toBe(await statementsForOneEvent(2))
  })
})

describe('unsubscribing', () => {
  it('frees everything a subscription registered, whether its client completes it or its socket closes (each stream kind, several per socket)', async () => {
    // An instance of its own, so the hub's registry holds only this test's subscriptions.
    const server = await startInstance(createRealtime())
    const clients: Client[] = []
    try {
      const [owner, ...members] = await newUsers(4)
      const group = await createGroup(owner!, members)
      // Per member two sockets, each with a live conversation stream, a replaying batch stream and an inbox.
      const streams = members.flatMap((member) =>
        [0, 1].flatMap(() => {
          const client = wsClient(server.wsUrl, member.token)
          clients.push(client)
          return [
            subscribeWs(client, ConversationEvents, { conversationId: group.id, sincePts: group.lastPts }),
            subscribeWs(client, ConversationEventBatches, { conversationId: group.id, sincePts: 0 }),
            subscribeWs(client, InboxEvents),
          ]
        }),
      )
      for (const member of members) await waitForSubscriptions(server.app, member, 6)
      const sent = await post(server.url, owner!.token, SendMessage, {
        input: { conversationId: group.id, clientMessageId: 'freed', content: { text: { text: 'to all' } } },
      })
      const messageId = sent.data!.sendMessage.message.id
      // Each has delivered (and so parked after) a live event.
      await Promise.all(
        streams.map((stream) => stream.waitUntil((events) => JSON.stringify(events).includes(messageId))),
      )

      // The first socket of each member completes its subscriptions and stays open; the second closes.
      await Promise.all(
        clients.map(async (client, i) => {
          if (i % 2) await client.dispose()
          else streams.slice(i * 3, i * 3 + 3).forEach((stream) => stream.dispose())
        }),
      )
      for (const member of members) await waitForSubscriptions(server.app, member, 0)
      expect(server.app.hub.open.size).toBe(0)
      expect(server.app.hub.stats()).toEqual({ subscriptions: 0, conversationTopics: 0, userTopics: 0 })
      expect(streams.flatMap((stream) => stream.errors)).toEqual([])
    } finally {
      await Promise.all(clients.map((client) => Promise.resolve(client.dispose())))
      await server.close()
    }
  })
})
