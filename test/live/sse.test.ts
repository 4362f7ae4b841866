import { describe, expect, it } from 'vitest'
import { createRealtime } from '../../src/realtime/pubsub.ts'
import { newUsers } from '../support/harness.ts'
import { liveServer, startInstance, subscribeSse, waitForSubscriptions } from '../support/server.ts'
import { ConversationEvents, InboxEvents } from '../support/live.ts'
import { createGroup, sendText } from '../support/operations.ts'

const instance = liveServer()

const messageIds = (events: { conversationEvents: { __typename: string } }[]) =>
  events.map((e) => (e.conversationEvents as { message?: { id: string } }).message?.id)

describe('subscriptions over Server-Sent Events', () => {
  it('replays from sincePts, then delivers live events, with the token in the Authorization header', async () => {
    const [owner, member] = await newUsers(2)
    const group = await createGroup(owner!, [member!])
    const missed = await sendText(owner!, group.id, 'missed')
    const stream = subscribeSse(instance.server.url, member!.token, ConversationEvents, {
      conversationId: group.id,
      sincePts: group.lastPts,
    })
    expect(messageIds(await stream.waitFor(1))).toEqual([missed.message.id])
    const live = await sendText(owner!, group.id, 'live')
    expect(messageIds(await stream.waitFor(2))).toEqual([missed.message.id, live.message.id])
    expect(stream.events[1]!.conversationEvents).toMatchObject({
      __typename: 'MessageEvent',
      kind: 'ADDED',
      pts: live.message.pts,
    })
    stream.dispose()
  })

  it('delivers the inbox stream', async () => {
    const [owner, member] = await newUsers(2)
    const group = await createGroup(owner!, [member!])
    const inbox = subscribeSse(instance.server.url, member!.token, InboxEvents)
    await waitForSubscriptions(instance.server.app, member!, 1)
    const sent = await sendText(owner!, group.id, 'to the inbox')
    expect((await inbox.waitFor(1))[0]!.inboxEvents).toMatchObject({
      __typename: 'MessageEvent',
      message: { id: sent.message.id },
    })
    inbox.dispose()
  })

  it('answers a non-member with NOT_FOUND and no token with UNAUTHENTICATED, and ends the stream', async () => {
    const [owner, stranger] = await newUsers(2)
    const group = await createGroup(owner!, [])
    for (const [token, code] of [
      [stranger!.token, 'NOT_FOUND'],
      [null, 'UNAUTHENTICATED'],
    ] as const) {
      const stream = subscribeSse(instance.server.url, token, ConversationEvents, {
        conversationId: group.id,
        sincePts: 0,
      })
      await stream.ended()
      expect(stream.errors.map((e) => e.extensions?.code)).toEqual([code])
      expect(stream.events).toEqual([])
    }
  })

  it('ends open streams when the server shuts down, and the client resumes elsewhere with sincePts', async () => {
    const [owner, member] = await newUsers(2)
    const group = await createGroup(owner!, [member!])
    const first = await sendText(owner!, group.id, 'first')
    const doomed = await startInstance(createRealtime())
    const stream = subscribeSse(doomed.url, member!.token, ConversationEvents, {
      conversationId: group.id,
      sincePts: group.lastPts,
    })
    await stream.waitFor(1)
    await doomed.close()
    await stream.ended()
    expect(stream.errors).toEqual([])

    const later = await sendText(owner!, group.id, 'while away')
    const resumed = subscribeSse(instance.server.url, member!.token, ConversationEvents, {
      conversationId: group.id,
      sincePts: first.message.pts,
    })
    expect(messageIds(await resumed.waitFor(1))).toEqual([later.message.id])
    resumed.dispose()
  })
})
