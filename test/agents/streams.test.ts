import { setTimeout as sleep } from 'node:timers/promises'
import { describe, expect, it } from 'vitest'
import { codes, countStatements, newUsers, type TestUser } from '../support/harness.ts'
import { liveServer, subscribeWs, waitForSubscriptions } from '../support/server.ts'
import { createGroup } from '../support/operations.ts'
import { EditMessage } from '../support/lifecycle.ts'
import { AgentEvents, Append, Finish, InboxStreamEvents, ReadMessage, StartStream } from '../support/agents.ts'

const instance = liveServer()

type Event = { conversationEvents: { __typename: string } & Record<string, unknown> }

async function follow(user: TestUser, conversationId: string, open = 0) {
  const stream = subscribeWs(instance.connect(user.token), AgentEvents, { conversationId })
  await waitForSubscriptions(instance.server.app, user, open + 1)
  return stream
}

let started = 0
async function start(agent: TestUser, conversationId: string) {
  const { startStreamingMessage } = await agent.run(StartStream, {
    conversationId,
    clientMessageId: `stream-${process.pid}-${++started}`,
  })
  return startStreamingMessage.message
}

const streamEvents = (events: Event[]) =>
  events.map((e) => e.conversationEvents).filter((e) => e.__typename === 'MessageStreamEvent')
const ended = (events: Event[]) =>
  events.map((e) => e.conversationEvents).filter((e) => e.__typename === 'MessageEvent' && e.kind === 'STREAM_ENDED')

describe('streamed replies', () => {
  it('starts a STREAMING message, streams deltas in order with the text so far, and ends once with one pts', async () => {
    const [agent, reader] = await newUsers(2)
    const group = await createGroup(agent!, [reader!])
    const first = await follow(reader!, group.id)
    const message = await start(agent!, group.id)
    expect(message).toMatchObject({ status: 'STREAMING', content: { text: '' } })
    const words = ['Hel', 'lo', ', ', 'wor', 'ld']
    for (const [i, delta] of words.slice(0, 3).entries())
      expect(
        (await agent!.run(Append, { messageId: message.id, sequence: i + 1, delta })).appendToStreamingMessage,
      ).toBe(true)
    // A second device joins mid-stream: the stored text so far (at most 250 ms behind), then the rest.
    await sleep(400)
    const read = await reader!.run(ReadMessage, { id: message.id })
    expect(read.node).toMatchObject({ status: 'STREAMING', content: { text: 'Hello, ' } })
    const second = await follow(reader!, group.id, 1)
    for (const [i, delta] of words.slice(3).entries())
      await agent!.run(Append, { messageId: message.id, sequence: i + 4, delta })
    const finished = (await agent!.run(Finish, { messageId: message.id })).finishStreamingMessage
    expect(finished).toMatchObject({ status: 'NORMAL', editedAt: null, content: { text: 'Hello, world' } })

    const all = await first.waitUntil((events) => ended(events).length === 1)
    expect(all[0]!.conversationEvents).toMatchObject({ __typename: 'MessageEvent', kind: 'ADDED', alert: true })
    expect(streamEvents(all)).toEqual(
      words.map((delta, i) => ({
        __typename: 'MessageStreamEvent',
        conversationId: group.id,
        messageId: message.id,
        sequence: i + 1,
        delta,
        text: words.slice(0, i + 1).join(''),
      })),
    )
    expect(ended(all)).toMatchObject([
      { pts: group.lastPts + 2, message: { status: 'NORMAL', content: { text: 'Hello, world' } } },
    ])
    const late = await second.waitUntil((events) => ended(events).length === 1)
    expect(streamEvents(late).map((e) => [e.sequence, e.text])).toEqual([
      [4, 'Hello, wor'],
      [5, 'Hello, world'],
    ])
    await sleep(100)
    expect(ended(late)).toHaveLength(1)
    expect(ended(first.events)).toHaveLength(1)
  })

  it('takes a repeated sequence as a no-op, refuses a gap, others, non-members and an edit while streaming', async () => {
    const [agent, member, outsider] = await newUsers(3)
    const group = await createGroup(agent!, [member!])
    const message = await start(agent!, group.id)
    await agent!.run(Append, { messageId: message.id, sequence: 1, delta: 'a' })
    expect(
      (await agent!.run(Append, { messageId: message.id, sequence: 1, delta: 'a' })).appendToStreamingMessage,
    ).toBe(true)
    expect(codes(await agent!.try(Append, { messageId: message.id, sequence: 3, delta: 'c' }))).toEqual([
      'BAD_USER_INPUT',
    ])
    expect(codes(await member!.try(Append, { messageId: message.id, sequence: 2, delta: 'x' }))).toEqual(['FORBIDDEN'])
    expect(codes(await outsider!.try(Append, { messageId: message.id, sequence: 2, delta: 'x' }))).toEqual([
      'NOT_FOUND',
    ])
    expect(codes(await member!.try(Finish, { messageId: message.id }))).toEqual(['FORBIDDEN'])
    expect(codes(await agent!.try(EditMessage, { messageId: message.id, text: 'edited' }))).toEqual(['NOT_EDITABLE'])
    expect(codes(await agent!.try(Append, { messageId: message.id, sequence: 2, delta: 'x'.repeat(10_000) }))).toEqual([
      'BAD_USER_INPUT',
    ])
    const finished = (await agent!.run(Finish, { messageId: message.id, text: 'final words' })).finishStreamingMessage
    expect(finished.content).toEqual({ text: 'final words' })
    // A retried finish answers the message as it is; an append after the end is refused.
    expect((await agent!.run(Finish, { messageId: message.id })).finishStreamingMessage.pts).toBe(finished.pts)
    expect(codes(await agent!.try(Append, { messageId: message.id, sequence: 2, delta: 'b' }))).toEqual([
      'NOT_EDITABLE',
    ])
  })

  it('keeps each stream in order under concurrent appends to two streams and retried sequences, inbox included', async () => {
    const [agent, reader] = await newUsers(2)
    const group = await createGroup(agent!, [reader!])
    const stream = await follow(reader!, group.id)
    const inbox = subscribeWs(instance.connect(reader!.token), InboxStreamEvents)
    await waitForSubscriptions(instance.server.app, reader!, 2)
    const messages = [await start(agent!, group.id), await start(agent!, group.id)]
    const DELTAS = 40
    // Each stream appends in order (awaiting each), the two at once, and every append is sent twice at once (a retry).
    await Promise.all(
      messages.map(async (m) => {
        for (let sequence = 1; sequence <= DELTAS; sequence++) {
          const both = await Promise.all(
            [0, 1].map(() => agent!.try(Append, { messageId: m.id, sequence, delta: `${sequence},` })),
          )
          expect(both.flatMap(codes)).toEqual([])
        }
      }),
    )
    const expected = Array.from({ length: DELTAS }, (_, i) => i + 1)
    const events = await stream.waitUntil((e) => streamEvents(e).length >= 2 * DELTAS)
    const inboxEvents = await inbox.waitUntil(
      (e) => e.filter((x) => x.inboxEvents.__typename === 'MessageStreamEvent').length >= 2 * DELTAS,
    )
    await sleep(100)
    for (const m of messages) {
      const ofMessage = streamEvents(stream.events).filter((e) => e.messageId === m.id)
      expect(ofMessage.map((e) => e.sequence)).toEqual(expected)
      expect(ofMessage.at(-1)!.text).toBe(expected.map((n) => `${n},`).join(''))
      const inInbox = inbox.events
        .map((e) => e.inboxEvents)
        .filter((e) => e.__typename === 'MessageStreamEvent' && e.messageId === m.id)
      expect(inInbox.map((e) => (e as { sequence: number }).sequence)).toEqual(expected)
    }
    expect(events.length).toBeGreaterThan(0)
    expect(inboxEvents.length).toBeGreaterThan(0)
  })

  it('writes the text in place at most every 250 ms: a few statements for 200 deltas, none a version', async () => {
    const [agent] = await newUsers(1)
    const group = await createGroup(agent!, [])
    const message = await start(agent!, group.id)
    const statements = await countStatements(async () => {
      for (let sequence = 1; sequence <= 200; sequence++)
        await agent!.run(Append, { messageId: message.id, sequence, delta: 'x' })
    })
    // One store per 250 ms at most (the appends take a second or two here), never one per delta.
    expect(statements).toBeLessThanOrEqual(20)
    await sleep(400)
    expect((await agent!.run(ReadMessage, { id: message.id })).node).toMatchObject({
      status: 'STREAMING',
      pts: group.lastPts + 1,
      content: { text: 'x'.repeat(200) },
    })
  })
})
