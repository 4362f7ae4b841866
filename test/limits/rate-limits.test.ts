import type { Client } from 'graphql-ws'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApp } from '../../src/app.ts'
import { loadConfig } from '../../src/config/env.ts'
import { DEFAULT_RATE_LIMITS, parseRateLimits } from '../../src/config/rateLimits.ts'
import { DEFAULT_SETTINGS } from '../../src/domain/core/settings.ts'
import { createRealtime } from '../../src/realtime/pubsub.ts'
import {
  codes,
  newUser,
  newUsers,
  testApp,
  userWithHandle,
  uniqueHandle,
  type GraphQLResponse,
  type TestUser,
} from '../support/harness.ts'
import { ConversationEvents, SendTyping } from '../support/live.ts'
import { ConversationState, createGroup, SendMessage, SetTitle, UpsertUsers } from '../support/operations.ts'
import { post, startServer, subscribeWs, waitForSubscriptions, wsClient, type TestServer } from '../support/server.ts'

/** Tight limits, so each rule is reached in a few requests; every test has users of its own. */
const LIMITS =
  'send=3/1,sendSustained=5/60,largeGroupMembers=3,largeGroupSend=1/60,largeGroupSendSustained=off,' +
  'mutation=3/60,typing=2/60,subscribe=2/60,openSockets=2,anonymous=3/60,agent.send=20/1,agent.sendSustained=off'

let server: TestServer
const clients: Client[] = []
beforeAll(async () => {
  const settings = { ...structuredClone(DEFAULT_SETTINGS), rateLimits: parseRateLimits(LIMITS) }
  server = await startServer(createApp({ db: testApp().db, realtime: createRealtime(), settings }))
})
afterAll(async () => {
  await Promise.all(clients.map((c) => Promise.resolve(c.dispose())))
  await server.close()
})

type Refusal = { extensions?: { code?: string; retryAfterMs?: number } }
const retryAfter = (response: GraphQLResponse<unknown>) =>
  (response.errors?.[0] as Refusal | undefined)?.extensions?.retryAfterMs

let counter = 0
const send = (user: TestUser, conversationId: string, clientMessageId = `rl-${++counter}-${Math.random()}`) =>
  post(server.url, user.token, SendMessage, {
    input: { conversationId, clientMessageId, content: { text: { text: 'hi' } } },
  })
const lastSeq = async (user: TestUser, id: string) =>
  (await post(server.url, user.token, ConversationState, { id })).data!.conversation!.lastSeq

describe('rate limits', () => {
  it('sends: over the burst RATE_LIMITED with retryAfterMs, nothing stored; the retry after it succeeds; then the sustained rate', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    const burst = await Promise.all([send(alice!, group.id), send(alice!, group.id), send(alice!, group.id)])
    expect(burst.map(codes)).toEqual([[], [], []])
    const refused = await send(alice!, group.id, 'over-the-burst')
    expect(codes(refused)).toEqual(['RATE_LIMITED'])
    expect(retryAfter(refused)).toBeGreaterThan(0)
    expect(retryAfter(refused)).toBeLessThanOrEqual(1000)
    expect(await lastSeq(alice!, group.id)).toBe(group.lastSeq + 3)

    await new Promise((resolve) => setTimeout(resolve, retryAfter(refused)))
    const retried = await send(alice!, group.id, 'over-the-burst')
    expect(retried.data?.sendMessage).toMatchObject({
      deduplicated: false,
      message: { seq: group.lastSeq + 4, clientMessageId: 'over-the-burst' },
    })

    // Five per minute: the fifth passes, the sixth waits for the minute's window.
    expect(codes(await send(alice!, group.id))).toEqual([])
    const sustained = await send(alice!, group.id)
    expect(codes(sustained)).toEqual(['RATE_LIMITED'])
    expect(retryAfter(sustained)).toBeGreaterThan(1000)
    expect(await lastSeq(alice!, group.id)).toBe(group.lastSeq + 5)
  })

  it('sends into a group over largeGroupMembers are stricter; AGENT users have limits of their own', async () => {
    const operator = await newUser({ operator: true })
    const agentHandle = uniqueHandle('agent')
    await operator.run(UpsertUsers, { users: [{ handle: agentHandle, displayName: 'Bot', kind: 'AGENT' }] })
    const [owner, a, b, c, d] = [...(await newUsers(4)), await userWithHandle(agentHandle)]
    const large = await createGroup(owner, [a!, b!, c!, d!])
    const small = await createGroup(owner, [a!])
    expect(codes(await send(owner, large.id))).toEqual([])
    expect(codes(await send(owner, large.id))).toEqual(['RATE_LIMITED'])
    expect(codes(await send(owner, small.id))).toEqual([])
    expect(await lastSeq(owner, large.id)).toBe(large.lastSeq + 1)

    // Eight at once: over a user's burst of 3, within the agent tier's 20; the large group's 1 per minute holds for agents too.
    const ofAgent = await createGroup(d!, [a!])
    const agentSends = await Promise.all(Array.from({ length: 8 }, () => send(d!, ofAgent.id)))
    expect(agentSends.map(codes)).toEqual(Array.from({ length: 8 }, () => []))
    expect(codes(await send(d!, large.id))).toEqual([])
    expect(codes(await send(d!, large.id))).toEqual(['RATE_LIMITED'])
  })

  it('any other mutation counts against the mutation rule, by root field', async () => {
    const [owner, member] = await newUsers(2)
    const group = await createGroup(owner!, [member!])
    const rename = (title: string) => post(server.url, owner!.token, SetTitle, { conversationId: group.id, title })
    for (const title of ['one', 'two', 'three']) expect(codes(await rename(title))).toEqual([])
    const refused = await rename('four')
    expect(codes(refused)).toEqual(['RATE_LIMITED'])
    expect(retryAfter(refused)).toBeGreaterThan(1000)
    // Each rename wrote a system message; the refused one wrote nothing.
    expect(await lastSeq(owner!, group.id)).toBe(group.lastSeq + 3)
  })

  it('typing has its own rule', async () => {
    const [owner, member] = await newUsers(2)
    const group = await createGroup(owner!, [member!])
    const typing = () => post(server.url, member!.token, SendTyping, { id: group.id })
    expect([codes(await typing()), codes(await typing()), codes(await typing())]).toEqual([[], [], ['RATE_LIMITED']])
  })

  it('subscriptions per connection, open WebSockets per user', async () => {
    const [owner, member] = await newUsers(2)
    const group = await createGroup(owner!, [member!])
    const closes: number[] = []
    const connect = () => {
      const client = wsClient(server.wsUrl, member!.token, {
        on: { closed: (event) => void closes.push((event as { code: number }).code) },
      })
      clients.push(client)
      return client
    }
    const first = connect()
    const follow = (client: Client) => subscribeWs(client, ConversationEvents, { conversationId: group.id })
    const [s1, s2, s3] = [follow(first), follow(first), follow(first)]
    await s3.waitFor(1)
    expect(s3.errors.map((e) => e.extensions?.code)).toEqual(['RATE_LIMITED'])
    expect([s1.errors, s2.errors]).toEqual([[], []])

    const second = follow(connect())
    await waitForSubscriptions(server.app, member!, 3)
    const third = follow(connect())
    await third.ended()
    expect(third.errors[0]!.message).toMatch(/RATE_LIMITED: at most 2 open WebSockets/)
    expect(closes).toEqual([4429])
    expect(second.errors).toEqual([])
  })

  it('requests without a valid token are counted per address', async () => {
    const anonymous = (authorization?: string) =>
      fetch(server.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
        body: JSON.stringify({ query: '{ __typename }' }),
      }).then((r) => r.json() as Promise<GraphQLResponse<unknown>>)
    expect(codes(await anonymous())).toEqual([])
    expect(codes(await anonymous('Bearer not-a-token'))).toEqual(['UNAUTHENTICATED'])
    expect(codes(await anonymous())).toEqual([])
    expect(codes(await anonymous())).toEqual(['RATE_LIMITED'])
  })
})

describe('RATE_LIMITS', () => {
  it('overrides the documented defaults per rule and tier, and names a bad entry', () => {
    expect(loadConfig({}).RATE_LIMITS).toEqual(DEFAULT_RATE_LIMITS)
    expect(loadConfig({ RATE_LIMITS: 'off' }).RATE_LIMITS).toBeNull()
    const limits = loadConfig({
      RATE_LIMITS: 'send=5/2, operator.send=off, agent.openSockets=100',
      TRUST_PROXY: 'true',
    }).RATE_LIMITS!
    expect([limits.tiers.user.rates.send, limits.tiers.agent.rates.send, limits.tiers.operator.rates.send]).toEqual([
      { points: 5, seconds: 2 },
      { points: 5, seconds: 2 },
      undefined,
    ])
    expect([limits.tiers.agent.openSockets, limits.tiers.user.openSockets, limits.trustProxy]).toEqual([100, 20, true])
    expect(() => loadConfig({ RATE_LIMITS: 'send=fast' })).toThrow(
      'RATE_LIMITS="send=fast" has a bad entry "send=fast": must be points/seconds (both at least 1) or off',
    )
    expect(() => loadConfig({ RATE_LIMITS: 'robot.send=1/1' })).toThrow(/the tier must be one of user, agent, operator/)
  })
})
