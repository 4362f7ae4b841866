import { parse, print, type OperationDefinitionNode } from 'graphql'
import { describe, expect, it } from 'vitest'
import { schema } from '../../src/schema/index.ts'
import { sameForEveryMember } from '../../src/schema/sharedViews.ts'
import { newUsers } from '../support/harness.ts'
import { AddReaction } from '../support/interactions.ts'
import { DeleteForMe, EditMessage, SetFavorite } from '../support/lifecycle.ts'
import { InboxEvents } from '../support/live.ts'
import { createGroup, SendMessage, sendText } from '../support/operations.ts'
import { UpdateSettings } from '../support/settings.ts'
import { liveServer, subscribeWs, waitForSubscriptions } from '../support/server.ts'

/**
 * Decision 0271: an event's rows are read once for all its subscribers and each one's view is
 * decided in memory. Two members subscribed to the same events must still each get their own:
 * their own delete-for-me, favourite and reaction, and the quoted message as each may see it.
 */

const instance = liveServer()

const Inbox = `subscription FanoutViews {
  inboxEvents {
    __typename
    ... on MessageEvent {
      kind
      message {
        id
        content { ... on TextContent { text } }
        quoted { id }
        reactions { emoji count viewerReacted }
        viewerState { favorite }
      }
    }
  }
}`

type Event = {
  inboxEvents: {
    __typename: string
    kind?: string
    message?: {
      id: string
      content: { text?: string } | null
      quoted: { id: string } | null
      reactions: { emoji: string; count: number; viewerReacted: boolean }[]
      viewerState: { favorite: boolean }
    }
  }
}

describe('one event, each subscriber its own view', () => {
  it('decides delete-for-me, favourites, reactions and quotes per subscriber from reads shared by both', async () => {
    const [owner, deleter, keeper] = await newUsers(3, 'views')
    const group = await createGroup(owner!, [deleter!, keeper!])
    const [toDeleter, toKeeper] = [deleter!, keeper!].map((u) =>
      subscribeWs<Event, never>(instance.connect(u.token), Inbox),
    )
    await waitForSubscriptions(instance.server.app, deleter!, 1)
    await waitForSubscriptions(instance.server.app, keeper!, 1)
    const messages = (events: Event[]) =>
      events.map((e) => e.inboxEvents).filter((e) => e.__typename === 'MessageEvent')

    // Each change waits until both have its event: the wave reads the rows when it is delivered.
    const bothHave = (count: number) =>
      Promise.all([toDeleter!, toKeeper!].map((s) => s.waitUntil((events) => messages(events).length >= count)))
    const first = (await sendText(owner!, group.id, 'first')).message
    await bothHave(1)
    await deleter!.run(AddReaction, { messageId: first.id, emoji: '👍' })
    await bothHave(2)
    await keeper!.run(SetFavorite, { messageId: first.id, favorite: true })
    await deleter!.run(DeleteForMe, { ids: [first.id] })
    await owner!.run(EditMessage, { messageId: first.id, text: 'first, edited' })
    const reply = (
      await owner!.run(SendMessage, {
        input: {
          conversationId: group.id,
          clientMessageId: 'views-reply',
          content: { text: { text: 'reply' } },
          quotedMessageId: first.id,
        },
      })
    ).sendMessage.message
    await sendText(owner!, group.id, 'last')

    const done = (events: Event[]) => messages(events).some((e) => e.message?.content?.text === 'last')
    const [deleterSaw, keeperSaw] = await Promise.all([toDeleter!.waitUntil(done), toKeeper!.waitUntil(done)])

    expect(messages(deleterSaw)).toMatchObject([
      { kind: 'ADDED', message: { id: first.id, reactions: [], viewerState: { favorite: false } } },
      {
        kind: 'REACTIONS_CHANGED',
        message: { id: first.id, reactions: [{ emoji: '👍', count: 1, viewerReacted: true }] },
      },
      // The edit of a message deleted for them is not theirs; the reply shows no quote.
      { kind: 'ADDED', message: { id: reply.id, quoted: null } },
      { kind: 'ADDED', message: { content: { text: 'last' } } },
    ])
    expect(messages(keeperSaw)).toMatchObject([
      { kind: 'ADDED', message: { id: first.id, reactions: [], viewerState: { favorite: false } } },
      {
        kind: 'REACTIONS_CHANGED',
        message: { id: first.id, reactions: [{ emoji: '👍', count: 1, viewerReacted: false }] },
      },
      {
        kind: 'EDITED',
        message: {
          id: first.id,
          content: { text: 'first, edited' },
          reactions: [{ emoji: '👍', count: 1, viewerReacted: false }],
          viewerState: { favorite: true },
        },
      },
      { kind: 'ADDED', message: { id: reply.id, quoted: { id: first.id } } },
      { kind: 'ADDED', message: { content: { text: 'last' } } },
    ])
    expect([...toDeleter!.errors, ...toKeeper!.errors]).toEqual([])
  })
})

const Alerts = `subscription FanoutAlerts {
  inboxEvents {
    __typename
    ... on MessageEvent {
      alert
      message { id sender { handle } content { ... on TextContent { text } } conversation { id title } }
    }
    ... on MessageActionEvent { messageId favorite }
  }
}`

const operation = (document: string) => parse(document).definitions[0] as OperationDefinitionNode

describe('results shared by subscribers who see an event alike', () => {
  it('are shared only by operations that select nothing else a member sees differently', () => {
    expect(sameForEveryMember(schema, operation(Alerts))).toBe(true)
    expect(sameForEveryMember(schema, operation(print(InboxEvents)))).toBe(true)
    expect(sameForEveryMember(schema, operation(Inbox))).toBe(false)
    for (const field of ['mentionsViewer', 'quoted { id }', 'receipt { readCount }', 'conversation { unreadCount }'])
      expect(
        sameForEveryMember(
          schema,
          operation(`subscription { inboxEvents { ... on MessageEvent { message { ${field} } } } }`),
        ),
      ).toBe(false)
    // Fields selected through named fragments count as well (a client's generated documents use them).
    const viaFragments = (document: string) =>
      sameForEveryMember(schema, operation(document), parse(document).definitions)
    const spread = 'subscription { conversationEvents(conversationId: "x") { ...E } }'
    expect(viaFragments(`${spread} fragment E on MessageEvent { message { ...M } } fragment M on Message { id }`)).toBe(
      true,
    )
    for (const field of ['receipt { readCount }', 'reactions { viewerReacted }', 'mentionsViewer'])
      expect(
        viaFragments(`${spread} fragment E on MessageEvent { message { ...M } } fragment M on Message { ${field} }`),
      ).toBe(false)
    expect(
      viaFragments(
        `${spread} fragment E on MessageEvent { message { content { ...T } } } fragment T on TextContent { text }`,
      ),
    ).toBe(true)
  })

  it('still give each subscriber its own alert: the sender, a member, a member in do-not-disturb', async () => {
    const [sender, member, quiet] = await newUsers(3, 'alerts')
    const group = await createGroup(sender!, [member!, quiet!])
    await quiet!.run(UpdateSettings, { id: group.id, input: { doNotDisturbUntil: '9999-12-31T00:00:00.000Z' } })
    const streams = [sender!, member!, quiet!].map((u) =>
      subscribeWs<Event & { inboxEvents: { alert?: boolean } }, never>(instance.connect(u.token), Alerts),
    )
    for (const u of [sender!, member!, quiet!]) await waitForSubscriptions(instance.server.app, u, 1)
    const sent = (await sendText(sender!, group.id, 'shared')).message
    const got = await Promise.all(
      streams.map(
        async (s) =>
          (await s.waitUntil((es) => es.some((e) => e.inboxEvents.message?.id === sent.id))).find(
            (e) => e.inboxEvents.message?.id === sent.id,
          )!.inboxEvents,
      ),
    )
    expect(got.map((e) => e.alert)).toEqual([false, true, false])
    for (const event of got) expect(event.message).toMatchObject({ id: sent.id, content: { text: 'shared' } })
    for (const s of streams) expect(s.errors).toEqual([])
  })
})
