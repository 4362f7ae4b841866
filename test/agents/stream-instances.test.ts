import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, describe, expect, it } from 'vitest'
import { startStreamSweeper } from '../../src/domain/streams/index.ts'
import { newUsers } from '../support/harness.ts'
import {
  post,
  spawnInstance,
  subscribeWs,
  testRedisUrl,
  twoInstances,
  waitForSubscriptions,
} from '../support/server.ts'
import { createGroup } from '../support/operations.ts'
import { AgentEvents, Append, ReadMessage, StartStream } from '../support/agents.ts'

/** Two instances (through Redis when TEST_REDIS_URL is set), each sweeping idle streams after 1 s. */
const instances = twoInstances()
const IDLE_MS = 1000
const sweepers: { stop(): Promise<void> }[] = []
afterAll(() => Promise.all(sweepers.map((s) => s.stop())))

type Event = { conversationEvents: { __typename: string } & Record<string, unknown> }
const kinds = (events: Event[]) =>
  events.map((e) =>
    e.conversationEvents.__typename === 'MessageEvent' ? e.conversationEvents.kind : e.conversationEvents.__typename,
  )

function sweepOn(...servers: (typeof instances)['a'][]) {
  for (const server of servers) {
    server.app.settings.streamIdleTimeoutMs = IDLE_MS
    sweepers.push(startStreamSweeper(server.app, { intervalMs: 200 }))
  }
}

let counter = 0
const clientMessageId = () => `multi-${process.pid}-${++counter}`

describe(`streams on several instances (${testRedisUrl ? 'Redis' : 'one process'})`, () => {
  it('keeps the order of deltas taken by alternating instances, and the idle sweeper ends an abandoned stream once', async () => {
    sweepOn(instances.a, instances.b)
    const [agent, reader] = await newUsers(2)
    const group = await createGroup(agent!, [reader!])
    const onA = subscribeWs(instances.connect(instances.a, reader!.token), AgentEvents, { conversationId: group.id })
    const onB = subscribeWs(instances.connect(instances.b, reader!.token), AgentEvents, { conversationId: group.id })
    await waitForSubscriptions(instances.a.app, reader!, 1)
    await waitForSubscriptions(instances.b.app, reader!, 1)
    const started = await post(instances.a.url, agent!.token, StartStream, {
      conversationId: group.id,
      clientMessageId: clientMessageId(),
    })
    const message = started.data!.startStreamingMessage.message
    for (let sequence = 1; sequence <= 30; sequence++) {
      const via = sequence % 2 ? instances.a : instances.b
      const answer = await post(via.url, agent!.token, Append, {
        messageId: message.id,
        sequence,
        delta: `${sequence} `,
      })
      expect(answer.errors).toBeUndefined()
    }
    const text = Array.from({ length: 30 }, (_, i) => `${i + 1} `).join('')
    const abandonedAt = Date.now()
    for (const stream of [onA, onB]) {
      const events = await stream.waitUntil((e) => kinds(e).includes('STREAM_ENDED'))
      const deltas = events.map((e) => e.conversationEvents).filter((e) => e.__typename === 'MessageStreamEvent')
      expect(deltas.map((e) => e.sequence)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1))
      expect(events.at(-1)!.conversationEvents).toMatchObject({ kind: 'STREAM_ENDED', message: { content: { text } } })
    }
    // Ended within 2 s after the idle timeout, and only once although both instances sweep.
    expect(Date.now() - abandonedAt).toBeLessThan(IDLE_MS + 2000)
    await sleep(500)
    expect(kinds(onA.events).filter((k) => k === 'STREAM_ENDED')).toHaveLength(1)
    expect(kinds(onB.events).filter((k) => k === 'STREAM_ENDED')).toHaveLength(1)
  })

  it('ends with the text so far a stream whose instance was killed (kill -9) right after its last delta', async () => {
    const [agent, reader] = await newUsers(2)
    const group = await createGroup(agent!, [reader!])
    const watching = subscribeWs(instances.connect(instances.b, reader!.token), AgentEvents, {
      conversationId: group.id,
    })
    await waitForSubscriptions(instances.b.app, reader!, 1)
    const doomed = await spawnInstance({ STREAM_IDLE_TIMEOUT_MS: String(IDLE_MS) })
    try {
      const started = await post(doomed.url, agent!.token, StartStream, {
        conversationId: group.id,
        clientMessageId: clientMessageId(),
      })
      const message = started.data!.startStreamingMessage.message
      for (let sequence = 1; sequence <= 5; sequence++)
        await post(doomed.url, agent!.token, Append, { messageId: message.id, sequence, delta: `d${sequence}` })
      // In process (no Redis) the text so far lives in the killed instance until stored: give it the store's 250 ms.
      if (!testRedisUrl) await sleep(400)
      doomed.child.kill('SIGKILL')
      await doomed.exited
      const events = await watching.waitUntil((e) => kinds(e).includes('STREAM_ENDED'))
      expect(events.at(-1)!.conversationEvents).toMatchObject({
        kind: 'STREAM_ENDED',
        message: { id: message.id, status: 'NORMAL', content: { text: 'd1d2d3d4d5' } },
      })
      const read = await post(instances.a.url, reader!.token, ReadMessage, { id: message.id })
      expect(read.data!.node).toMatchObject({ status: 'NORMAL', content: { text: 'd1d2d3d4d5' } })
    } finally {
      if (doomed.child.exitCode === null) doomed.child.kill('SIGKILL')
    }
  })
})
