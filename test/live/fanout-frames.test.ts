import { describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { newUsers } from '../support/harness.ts'
import { AddReaction } from '../support/interactions.ts'
import { createGroup, sendText } from '../support/operations.ts'
import { liveServer, waitForSubscriptions } from '../support/server.ts'

/**
 * Decision 0296: a result shared by subscribers with the same view is serialised once, and each
 * subscription's `next` frame is that text under its own id. What two members receive for one
 * event must be the same text when they see it alike, and differ where their views differ.
 */

const instance = liveServer()

/** Selects only what every member sees alike (schema/sharedViews.ts): one result per view. */
const Shared = `subscription Shared { inboxEvents { __typename ... on MessageEvent {
  kind alert message { id content { ... on TextContent { text } } sender { handle } } } } }`
/** Selects `viewerReacted`: executed per subscriber. */
const Own = `subscription Own { inboxEvents { __typename ... on MessageEvent {
  kind message { id reactions { emoji count viewerReacted } } } } }`

/** A raw graphql-transport-ws socket: the text of each `next` frame per subscription id, as sent. */
async function rawSubscriber(token: string, operations: Record<string, string>) {
  const socket = new WebSocket(instance.server.wsUrl, 'graphql-transport-ws')
  const frames = new Map<string, string[]>(Object.keys(operations).map((id) => [id, []]))
  let arrived = () => {}
  let acknowledged = () => {}
  socket.on('message', (data: Buffer) => {
    const text = data.toString()
    const { id, type } = JSON.parse(text) as { id?: string; type: string }
    if (type === 'connection_ack') acknowledged()
    if (type === 'next') frames.get(id!)!.push(text)
    arrived()
  })
  await new Promise((resolve) => socket.once('open', resolve))
  const ack = new Promise<void>((resolve) => (acknowledged = resolve))
  socket.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${token}` } }))
  // A subscribe before the server's acknowledgement closes the socket (graphql-ws's 4401).
  await ack
  for (const [id, query] of Object.entries(operations))
    socket.send(JSON.stringify({ id, type: 'subscribe', payload: { query } }))
  return {
    frames,
    /** Resolves once every subscription has `count` frames. */
    async waitFor(count: number) {
      while ([...frames.values()].some((list) => list.length < count))
        await new Promise<void>((resolve) => (arrived = resolve))
    },
    close: () => socket.close(),
  }
}

/** A frame's text after its subscription id: `"type":"next","payload":…}`. */
const afterId = (frame: string) => {
  const id = (JSON.parse(frame) as { id: string }).id
  const prefix = `{"id":${JSON.stringify(id)},`
  expect(frame.startsWith(prefix)).toBe(true)
  return frame.slice(prefix.length)
}

describe('one serialised payload per view', () => {
  it('sends members who see an event alike the same payload text, and each their own where views differ', async () => {
    const [owner, reactor, watcher] = await newUsers(3, 'frames')
    const group = await createGroup(owner!, [reactor!, watcher!])
    const ofReactor = await rawSubscriber(reactor!.token, { shared: Shared, own: Own })
    const ofWatcher = await rawSubscriber(watcher!.token, { shared: Shared, own: Own })
    try {
      await waitForSubscriptions(instance.server.app, reactor!, 2)
      await waitForSubscriptions(instance.server.app, watcher!, 2)
      const first = (await sendText(owner!, group.id, 'seen alike')).message
      await Promise.all([ofReactor.waitFor(1), ofWatcher.waitFor(1)])
      await reactor!.run(AddReaction, { messageId: first.id, emoji: '👍' })
      await Promise.all([ofReactor.waitFor(2), ofWatcher.waitFor(2)])

      const payloads = (of: typeof ofReactor, id: string) => of.frames.get(id)!.map(afterId)
      // Shared: the same text for both, for the new message and for the reaction change.
      expect(payloads(ofReactor, 'shared')).toEqual(payloads(ofWatcher, 'shared'))
      expect(JSON.parse(`{${payloads(ofReactor, 'shared')[1]!}`)).toMatchObject({
        payload: {
          data: { inboxEvents: { kind: 'REACTIONS_CHANGED', alert: false, message: { id: first.id } } },
        },
      })
      // Own: the message alike, the reaction change not (only the reactor reacted).
      const [reactorOwn, watcherOwn] = [payloads(ofReactor, 'own'), payloads(ofWatcher, 'own')]
      expect(reactorOwn[0]).toBe(watcherOwn[0])
      expect(reactorOwn[1]).not.toBe(watcherOwn[1])
      const reacted = (payload: string) =>
        (JSON.parse(`{${payload}`) as { payload: { data: { inboxEvents: { message: { reactions: unknown } } } } })
          .payload.data.inboxEvents.message.reactions
      expect(reacted(reactorOwn[1]!)).toEqual([{ emoji: '👍', count: 1, viewerReacted: true }])
      expect(reacted(watcherOwn[1]!)).toEqual([{ emoji: '👍', count: 1, viewerReacted: false }])
    } finally {
      ofReactor.close()
      ofWatcher.close()
    }
  })
})
