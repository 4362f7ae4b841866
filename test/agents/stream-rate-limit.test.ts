import { setTimeout as sleep } from 'node:timers/promises'
import { describe, expect, it } from 'vitest'
import { DELTAS_PER_SECOND } from '../../src/domain/streams/limits.ts'
import { newUsers, request, type TestUser } from '../support/harness.ts'
import { liveServer, subscribeWs, waitForSubscriptions } from '../support/server.ts'
import { createGroup } from '../support/operations.ts'
import { AgentEvents, Append, ReadMessage, StartStream } from '../support/agents.ts'

const instance = liveServer()

/** Appends per request: aliased mutations run one after another, so a burst is not slowed by HTTP. */
const PER_REQUEST = 25

/** Appends `count` deltas "x" to `messageId` from `sequence` on, in one request. */
const burst = (user: TestUser, messageId: string, sequence: number, count: number) => {
  const fields = Array.from(
    { length: count },
    (_, i) => `s${sequence + i}: appendToStreamingMessage(messageId: $m, sequence: ${sequence + i}, delta: "x")`,
  )
  return request<Record<string, boolean>, { m: string }>(user.token, `mutation ($m: ID!) { ${fields.join(' ')} }`, {
    m: messageId,
  })
}

let started = 0
const start = async (agent: TestUser, conversationId: string) =>
  (await agent.run(StartStream, { conversationId, clientMessageId: `limited-${process.pid}-${++started}` }))
    .startStreamingMessage.message

type Event = { __typename: string; messageId?: string; sequence?: number }

describe('deltas are rate-limited per stream', () => {
  it('refuses a burst past the limit with RATE_LIMITED, keeps the refused delta out, and leaves another stream alone', async () => {
    const [agent, reader] = await newUsers(2)
    const group = await createGroup(agent!, [reader!])
    const live = subscribeWs(instance.connect(reader!.token), AgentEvents, { conversationId: group.id })
    await waitForSubscriptions(instance.server.app, reader!, 1)
    const limited = await start(agent!, group.id)
    const other = await start(agent!, group.id)

    // Bursts until one is refused; the limit is per second, so at most a few windows' worth go through first.
    let refusal: { sequence: number; code?: string; retryAfterMs?: number } | undefined
    for (let sequence = 1; !refusal && sequence <= 8 * DELTAS_PER_SECOND; sequence += PER_REQUEST) {
      const response = await burst(agent!, limited.id, sequence, PER_REQUEST)
      const error = response.errors?.[0] as { path?: string[]; extensions?: Record<string, unknown> } | undefined
      if (error)
        refusal = {
          sequence: Number(error.path![0]!.slice(1)),
          code: error.extensions?.code as string,
          retryAfterMs: error.extensions?.retryAfterMs as number,
        }
    }
    expect(refusal).toMatchObject({ code: 'RATE_LIMITED', retryAfterMs: 1000 })
    const accepted = refusal!.sequence - 1
    expect(accepted).toBeGreaterThanOrEqual(DELTAS_PER_SECOND)

    // Another stream of the same sender, in the same conversation, takes its deltas meanwhile.
    expect((await agent!.run(Append, { messageId: other.id, sequence: 1, delta: 'y' })).appendToStreamingMessage).toBe(
      true,
    )
    // After retryAfterMs the refused sequence is taken: the refusal consumed nothing.
    await sleep(refusal!.retryAfterMs)
    expect(
      (await agent!.run(Append, { messageId: limited.id, sequence: refusal!.sequence, delta: 'z' }))
        .appendToStreamingMessage,
    ).toBe(true)

    const events = () => live.events.map((e) => e.conversationEvents as Event)
    const sequencesOf = (id: string) =>
      events()
        .filter((e) => e.__typename === 'MessageStreamEvent' && e.messageId === id)
        .map((e) => e.sequence)
    await live.waitUntil(() => sequencesOf(limited.id).length >= refusal!.sequence)
    await sleep(100)
    expect(sequencesOf(limited.id)).toEqual(Array.from({ length: refusal!.sequence }, (_, i) => i + 1))
    expect(sequencesOf(other.id)).toEqual([1])
    await sleep(400)
    expect((await reader!.run(ReadMessage, { id: limited.id })).node).toMatchObject({
      status: 'STREAMING',
      content: { text: `${'x'.repeat(accepted)}z` },
    })
  })
})
