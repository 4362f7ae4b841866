import { readFileSync } from 'node:fs'
import { print } from 'graphql'
import type { Client } from 'graphql-ws'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { newUsers, type TestUser } from '../support/harness.ts'
import { Append, Finish, StartStream } from '../support/agents.ts'
import { ConversationEvents, SendTyping } from '../support/live.ts'
import { createGroup, OpenPrivate } from '../support/operations.ts'
import { PresenceEvents, UserPresence } from '../support/push.ts'
import { spawnInstance, subscribeWs, wsClient, type Received } from '../support/server.ts'

type Instance = Awaited<ReturnType<typeof spawnInstance>>
type Event = { conversationEvents: { __typename: string; user?: { id: string }; message?: { id: string } } }

/** The worker processes of a primary (Linux: the kernel lists a process's children). */
const workerPids = (primary: number): number[] =>
  readFileSync(`/proc/${primary}/task/${primary}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number)

/** Lines of the instance's output matching `pattern`, waited for until there are `count` (bounded). */
async function waitForLines(instance: Instance, pattern: RegExp, count: number): Promise<void> {
  for (let i = 0; i < 300 && (instance.output().match(new RegExp(pattern, 'g')) ?? []).length < count; i++)
    await new Promise((resolve) => setTimeout(resolve, 100))
  expect((instance.output().match(new RegExp(pattern, 'g')) ?? []).length).toBeGreaterThanOrEqual(count)
}

/** One operation on a connection of its own: node:cluster hands each new connection to the next worker. */
async function postAlone(url: string, user: TestUser, query: string, variables: Record<string, unknown>) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${user.token}`, connection: 'close' },
    body: JSON.stringify({ query, variables }),
  })
  const body = (await response.json()) as { errors?: unknown; data: Record<string, unknown> }
  expect(body.errors).toBeUndefined()
  return body.data
}

describe('WORKERS=2 without Redis', () => {
  let instance: Instance
  const clients: Client[] = []

  beforeAll(async () => {
    instance = await spawnInstance({ WORKERS: '2', REDIS_URL: '' })
    await waitForLines(instance, /GraphQL \(GraphiQL/, 2)
  })
  afterAll(async () => {
    await Promise.all(clients.map((c) => Promise.resolve(c.dispose())))
    if (instance.child.exitCode === null) instance.child.kill('SIGKILL')
  })

  it('delivers live events across the workers, which share one port', async () => {
    expect(workerPids(instance.child.pid!)).toHaveLength(2)
    const users = await newUsers(4)
    const group = await createGroup(users[0]!, users.slice(1))
    // Four sockets, handed to the two workers in turn.
    const streams: Received<Event>[] = users.map((user) => {
      const client = wsClient(instance.wsUrl, user.token)
      clients.push(client)
      return subscribeWs(client, ConversationEvents, { conversationId: group.id })
    })
    // Typing is never stored nor replayed: only the live bus carries it, so each arrival crossed it.
    // A typist publishes at most once per 2 s; the rounds repeat until the sockets are all listening.
    const heardEveryone = () =>
      streams.every((stream, i) =>
        users.every(
          (typist, j) =>
            i === j ||
            stream.events.some(
              (e) => e.conversationEvents.__typename === 'TypingEvent' && e.conversationEvents.user?.id === typist.id,
            ),
        ),
      )
    for (let round = 0; round < 10 && !heardEveryone(); round++) {
      await Promise.all(users.map((typist) => postAlone(instance.url, typist, print(SendTyping), { id: group.id })))
      await new Promise((resolve) => setTimeout(resolve, 2_100))
    }
    expect(heardEveryone()).toBe(true)
  })

  it("keeps a streamed message's live text for every worker, whichever takes each delta", async () => {
    const [agent, reader] = await newUsers(2)
    const group = await createGroup(agent!, [reader!])
    const started = (await postAlone(instance.url, agent!, print(StartStream), {
      conversationId: group.id,
      clientMessageId: 'across-workers',
    })) as { startStreamingMessage: { message: { id: string } } }
    const messageId = started.startStreamingMessage.message.id
    // Each append on a connection of its own, so they alternate between the workers: a worker
    // without the live state would read the stored one back and refuse the next sequence.
    const deltas = ['one ', 'two ', 'three ', 'four ', 'five ', 'six']
    for (const [i, delta] of deltas.entries())
      await postAlone(instance.url, agent!, print(Append), { messageId, sequence: i + 1, delta })
    const finished = (await postAlone(instance.url, agent!, print(Finish), { messageId })) as {
      finishStreamingMessage: { status: string; content: { text: string } }
    }
    expect(finished.finishStreamingMessage).toMatchObject({ status: 'NORMAL', content: { text: deltas.join('') } })
  })

  it('answers who is online from every worker, while the subscription is on one of them', async () => {
    const [alice, bob] = await newUsers(2)
    await alice!.run(OpenPrivate, { userId: bob!.id })
    const online = async () => {
      const data = (await postAlone(instance.url, bob!, print(UserPresence), { id: alice!.id })) as {
        node: { presence: { online: boolean } }
      }
      return data.node.presence.online
    }
    /** Four answers on connections of their own, so from both workers. */
    const fromEveryWorker = async () => Promise.all([online(), online(), online(), online()])
    const client = wsClient(instance.wsUrl, alice!.token)
    const stream = subscribeWs(client, PresenceEvents)
    for (let i = 0; i < 100 && !(await online()); i++) await new Promise((resolve) => setTimeout(resolve, 100))
    expect(await fromEveryWorker()).toEqual([true, true, true, true])
    stream.dispose()
    await client.dispose()
    for (let i = 0; i < 100 && (await online()); i++) await new Promise((resolve) => setTimeout(resolve, 100))
    expect(await fromEveryWorker()).toEqual([false, false, false, false])
  })

  it('starts another worker when one dies, and drains every worker on SIGTERM', async () => {
    const [doomed] = workerPids(instance.child.pid!)
    process.kill(doomed!, 'SIGKILL')
    await waitForLines(instance, /exited \(signal SIGKILL\); starting another/, 1)
    await waitForLines(instance, /GraphQL \(GraphiQL/, 3)
    expect(workerPids(instance.child.pid!)).toHaveLength(2)
    expect(workerPids(instance.child.pid!)).not.toContain(doomed)
    instance.child.kill('SIGTERM')
    expect(await instance.exited).toBe(0)
    expect(instance.output()).toMatch(/SIGTERM: stopping 2 workers/)
  })
})
