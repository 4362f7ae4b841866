import { randomUUID } from 'node:crypto'
import type { TypedDocumentNode } from '@graphql-typed-document-node/core'
import { getIntrospectionQuery, parse, type DocumentNode } from 'graphql'
import { beforeAll, describe, expect, it } from 'vitest'
import { DEFAULT_QUERY_LIMITS, QUERY_TOO_COMPLEX } from '../../src/http/plugins/useQueryLimits.ts'
import { tallyOperation } from '../../src/http/plugins/queryNodes.ts'
import { schema } from '../../src/schema/index.ts'
import type { MessageContentInput, SendMessageInput } from '../gql/graphql.ts'
import { loadCorpus, type CorpusOperation } from '../support/corpus.ts'
import { codes, newUser, newUsers, request, testApp, type GraphQLResponse, type TestUser } from '../support/harness.ts'
import { SetFavorite, SetReminder } from '../support/lifecycle.ts'
import { createGroup, OpenPrivate, SendMessage, sendText } from '../support/operations.ts'
import { liveServer, subscribeWs, waitForSubscriptions, type Received } from '../support/server.ts'

const served = [...loadCorpus('relay'), ...loadCorpus('apollo'), ...loadCorpus('urql')]
const refused = loadCorpus('refused', 'relay')
const corpus = (name: string) => [...served, ...refused].find((op) => op.name === name)!

/** The node figure of every served operation with the corpus variables below: a counting change shows here. */
const SERVED_NODES: Record<string, number> = {
  'relay/ChatHistoryPaginationQuery': 28_703,
  'relay/ChatScreenQuery': 28_705,
  'relay/FavoritesQuery': 14_503,
  'relay/InboxQuery': 9_904,
  'relay/MessageRefetchQuery': 286,
  'relay/SearchScreenQuery': 6_002,
  'apollo/ConversationEvents': 49,
  'apollo/ConversationMessages': 4_903,
  'apollo/Inbox': 4_053,
  'apollo/Reminders': 5_002,
  'apollo/SearchUsers': 102,
  'apollo/SendMessage': 50,
  'urql/AdminMessages': 1_402,
  'urql/Changes': 3_302,
  'urql/ConversationEventBatches': 1_501,
  'urql/InboxEvents': 4,
  'urql/MarkRead': 3,
  'urql/MentionPicker': 17,
  'urql/MessagesAround': 1_604,
}

/** The limit each abusive operation exceeds, and the figure its message names. */
const REFUSED: Record<string, { limit: string; found: number }> = {
  'refused/aliased-pages': { limit: 'aliases', found: 100 },
  'refused/deep-30': { limit: 'depth', found: 30 },
  'refused/fragment-fan-out': { limit: 'nodes', found: 8_620_202 },
  'refused/nested-connections': { limit: 'nodes', found: 2_040_302 },
  'refused/nested-connections-variables': { limit: 'nodes', found: 2_040_302 },
  'refused/subscription-pages': { limit: 'nodes', found: 2_040_404 },
}

const PAGES = { count: 100, last: 100, first: 50, readers: 100, seq: 1, sincePts: 0 }
const tally = (document: DocumentNode | string, variables: Record<string, unknown> = {}) =>
  tallyOperation(schema, typeof document === 'string' ? parse(document) : document, undefined, variables)!

type Refusal = { message: string; extensions?: { code?: string; limit?: string; max?: number; found?: number } }

function expectRefused(errors: readonly Refusal[] | undefined, limit: string, found: number) {
  expect(errors).toHaveLength(1)
  const [error] = errors!
  expect(error!.extensions).toMatchObject({
    code: QUERY_TOO_COMPLEX,
    limit,
    found,
    max: DEFAULT_QUERY_LIMITS[limit as keyof typeof DEFAULT_QUERY_LIMITS],
  })
  expect(error!.message).toContain(found.toLocaleString('en-US'))
  expect(error!.message).toContain(
    `the limit is ${DEFAULT_QUERY_LIMITS[limit as keyof typeof DEFAULT_QUERY_LIMITS].toLocaleString('en-US')}`,
  )
  expect(error!.message).not.toMatch(/syntax error/i)
}

describe('the node count', () => {
  it('multiplies page sizes along each path and sums over the document, as GitHub computes it', () => {
    // viewer 1 + connection 1 + 50 × (edge + conversation + members connection + 10 × (edge + member + user))
    expect(
      tally(
        '{ viewer { conversations(first: 50) { edges { node { members(first: 10) { edges { node { user { id } } } } } } } } }',
      ).nodes,
    ).toBe(1 + 1 + 50 * (1 + 1 + 1 + 10 * 3))
  })

  it('reads page sizes from literals and variables alike, with the default page when absent', () => {
    const page = 'query($n: Int) { viewer { favorites(first: $n) { edges { node { id } } } } }'
    expect(tally(page, { n: 100 }).nodes).toBe(2 + 100 * 2)
    expect(tally(page, { n: 5 }).nodes).toBe(2 + 5 * 2)
    expect(tally(page).nodes).toBe(2 + 20 * 2)
    expect(tally('query($n: Int = 7) { viewer { favorites(first: $n) { edges { node { id } } } } }').nodes).toBe(
      2 + 7 * 2,
    )
    // The schema's own defaults: changes(first = 100), messagesAround(count = 20).
    expect(tally('{ conversation(id: "x") { changes(sincePts: 0) { messages { id } } } }').nodes).toBe(2 + 100)
    expect(tally('{ conversation(id: "x") { messagesAround(seq: 1) { edges { node { id } } } } }').nodes).toBe(
      2 + 20 * 2,
    )
    // Over 100 the resolver answers BAD_USER_INPUT and nothing is read: counted as the maximum.
    expect(tally(page, { n: 5000 }).nodes).toBe(2 + 100 * 2)
  })

  it('counts plain lists at the documented estimate, and the costliest member of a union rather than all', () => {
    // 10 messages × (message + content (1 + the larger member: 10 targets + actor = 11, not 11 + 10 items))
    expect(
      tally(
        '{ viewer { favorites(first: 10) { edges { node { content { ... on SystemContent { actor { id } targets { id } } ... on ForwardContent { items { kind } } } } } } } }',
      ).nodes,
    ).toBe(2 + 10 * (2 + 1 + 11))
  })

  it('counts a sync batch’s lists at its `first`, whose maximum is 500', () => {
    const batch = (first: number) =>
      tally(
        `query ($since: String!) { sync(since: $since, first: ${first}) { conversations { id } messageStates { messageId } } }`,
      ).nodes
    expect(batch(500)).toBe(1 + 500 + 500)
    expect(batch(3)).toBe(1 + 3 + 3)
  })

  it('counts a fragment once per use site as execution fans out, never by its nesting depth', () => {
    const inline = '{ viewer { favorites(first: 10) { edges { node { sender { id } quoted { sender { id } } } } } } }'
    const nested = `{ viewer { favorites(first: 10) { edges { node { ...A } } } } }
      fragment A on Message { ...B quoted { ...B } }
      fragment B on Message { ...C }
      fragment C on Message { ...D }
      fragment D on Message { sender { ...E } }
      fragment E on User { id }`
    expect(tally(nested).nodes).toBe(tally(inline).nodes)
    // Spread twice at one place, execution merges it: counted once. At two places: twice.
    const twice =
      '{ viewer { favorites(first: 10) { edges { node { ...M ...M } } } } } fragment M on Message { mentions { id } }'
    expect(tally(twice).nodes).toBe(
      tally('{ viewer { favorites(first: 10) { edges { node { mentions { id } } } } } }').nodes,
    )
    const twoSites =
      '{ viewer { a: favorites(first: 10) { edges { node { ...M } } } b: favorites(first: 10) { edges { node { ...M } } } } } fragment M on Message { id }'
    expect(tally(twoSites).nodes).toBe(1 + 2 * (1 + 10 * 2))
  })

  it('walks a fragment spread on every path once, so a fan-out of 2^40 paths is counted exactly and at once', () => {
    const levels = 40
    const fragments = Array.from(
      { length: levels },
      (_, i) => `fragment F${i} on Message { a: quoted { ...F${i + 1} } b: quoted { ...F${i + 1} } }`,
    )
    const document = `{ node(id: "x") { ...F0 } } ${fragments.join(' ')} fragment F${levels} on Message { id }`
    expect(tally(document)).toEqual({ nodes: 2 ** (levels + 1) - 1, height: levels + 2 })
  })

  it('puts every served operation of the corpus under the limit with the figures recorded here', () => {
    for (const op of served) {
      expect({ name: op.name, nodes: tally(op.document, PAGES).nodes }).toEqual({
        name: op.name,
        nodes: SERVED_NODES[op.name],
      })
      expect(tally(op.document, PAGES).height).toBeLessThanOrEqual(DEFAULT_QUERY_LIMITS.depth)
    }
    expect(Object.keys(SERVED_NODES).sort()).toEqual(served.map((op) => op.name).sort())
    expect(Math.max(...Object.values(SERVED_NODES))).toBeLessThan(DEFAULT_QUERY_LIMITS.nodes)
  })
})

describe('the corpus over HTTP', () => {
  let alice: TestUser
  let variables: Record<string, unknown>

  beforeAll(async () => {
    alice = await newUser({ operator: true, prefix: 'corpus' })
    const bob = await newUser({ prefix: 'corpus' })
    const group = await createGroup(alice, [bob])
    const first = await sendText(alice, group.id, 'hello')
    const send = (user: TestUser, content: MessageContentInput, extra: Partial<SendMessageInput> = {}) =>
      user.run(SendMessage, { input: { conversationId: group.id, clientMessageId: randomUUID(), content, ...extra } })
    const reply = await send(
      bob,
      { text: { text: 'reply' } },
      { quotedMessageId: first.message.id, mentionUserIds: [alice.id] },
    )
    const forward = await send(alice, { forward: { messageIds: [first.message.id, reply.sendMessage.message.id] } })
    await send(bob, { image: { url: 'https://example.com/a.png', width: 10, height: 10 } })
    await alice.run(SetFavorite, { messageId: reply.sendMessage.message.id, favorite: true })
    await alice.run(SetReminder, {
      messageId: forward.sendMessage.message.id,
      remindAt: new Date(Date.now() + 86_400_000).toISOString(),
    })
    variables = {
      ...PAGES,
      id: group.id,
      messageId: reply.sendMessage.message.id,
      filter: { conversationId: group.id },
      query: 'corpus',
    }
  })

  for (const op of served.filter((op) => op.kind !== 'subscription')) {
    it(`serves ${op.name}`, async () => {
      const input = {
        conversationId: variables.id,
        clientMessageId: randomUUID(),
        content: { text: { text: 'from the corpus' } },
      }
      const response = await request(alice.token, op.source, { ...variables, input })
      expect(response.errors).toBeUndefined()
      expect(response.data).toBeTruthy()
    })
  }

  for (const op of refused) {
    it(`refuses ${op.name}: ${REFUSED[op.name]!.limit} ${REFUSED[op.name]!.found.toLocaleString('en-US')}`, async () => {
      const response = await request(alice.token, op.source, { ...variables, first: 100, count: 100, readers: 100 })
      expectRefused(response.errors, REFUSED[op.name]!.limit, REFUSED[op.name]!.found)
      expect(response.data).toBeUndefined()
    })
  }

  it('bounds page sizes given as variables: the same document is served with small pages and refused with 100s, in any order', async () => {
    const op = corpus('refused/nested-connections-variables')
    const small = { first: 5, count: 10, readers: 3 }
    expect((await request(alice.token, op.source, small)).errors).toBeUndefined()
    expectRefused(
      (await request(alice.token, op.source, { first: 100, count: 100, readers: 100 })).errors,
      'nodes',
      2_040_302,
    )
    // Yoga caches validation per document; the node count, which depends on the variables, is not cached with it.
    expect((await request(alice.token, op.source, small)).errors).toBeUndefined()
    expectRefused(
      (await request(alice.token, op.source, { first: 100, count: 100, readers: 100 })).errors,
      'nodes',
      2_040_302,
    )
  })

  it('leaves a page over 100 to the resolver, which answers BAD_USER_INPUT', async () => {
    const response = await request(alice.token, '{ viewer { conversations(first: 1000) { edges { node { id } } } } }')
    expect(codes(response)).toEqual(['BAD_USER_INPUT'])
  })

  it("answers GraphiQL's introspection query", async () => {
    const response = await request(alice.token, getIntrospectionQuery())
    expect(response.errors).toBeUndefined()
  })

  it('answers like a validation error: 200 under application/json, 400 under application/graphql-response+json', async () => {
    for (const [accept, status] of [
      ['application/json', 200],
      ['application/graphql-response+json', 400],
    ] as const) {
      const response = await testApp().server.yoga.fetch('http://parley.test/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept, authorization: `Bearer ${alice.token}` },
        body: JSON.stringify({ query: corpus('refused/nested-connections').source }),
      })
      expect(response.status).toBe(status)
      const body = (await response.json()) as GraphQLResponse<unknown>
      expectRefused(body.errors, 'nodes', 2_040_302)
      // Yoga's HTTP status hint stays on the server.
      expect(body.errors![0]!.extensions).not.toHaveProperty('http')
    }
  })

  describe('refuses before anything can overflow the stack', () => {
    const refuse = async (query: string, limit: string, found: number) =>
      expectRefused((await request(alice.token, query)).errors, limit, found)

    it('a list literal nested 2,000 levels', () =>
      refuse(
        `{ viewer { conversations(first: 1, type: ${'['.repeat(2000)}${']'.repeat(2000)}) { edges { cursor } } } }`,
        'nesting',
        2003,
      ))

    it('a selection nested 10,000 levels', () =>
      refuse(`{ ${'a{'.repeat(9999)}b${'}'.repeat(9999)} }`, 'nesting', 10_000))

    it('a chain of 250 fragments, each one level deeper', async () => {
      const fragments = Array.from({ length: 250 }, (_, i) => `fragment F${i} on Message { quoted { ...F${i + 1} } }`)
      await refuse(`{ node(id: "x") { ...F0 } } ${fragments.join(' ')} fragment F250 on Message { id }`, 'depth', 252)
    })
  })

  it('refuses too many tokens and directives with their figures', async () => {
    expectRefused((await request(alice.token, `{ viewer { ${'isOperator '.repeat(3000)}} }`)).errors, 'tokens', 3005)
    const directives = Array.from({ length: 25 }, (_, i) => `d${i}: isOperator @include(if: true)`).join(' ')
    expectRefused((await request(alice.token, `{ viewer { ${directives} } }`)).errors, 'directives', 25)
  })
})

describe('the corpus over graphql-ws', () => {
  const live = liveServer()
  const subscribe = (
    user: TestUser,
    op: CorpusOperation,
    variables: Record<string, unknown> = {},
  ): Received<Record<string, unknown>> =>
    subscribeWs(
      live.connect(user.token),
      op.document as TypedDocumentNode<Record<string, unknown>, Record<string, unknown>>,
      variables,
    )

  it('serves the resume subscriptions (replays from sincePts 0)', async () => {
    const [alice, bob] = await newUsers(2, 'corpus-ws')
    const group = await createGroup(alice!, [bob!])
    await sendText(bob!, group.id, 'replayed')
    for (const name of ['apollo/ConversationEvents', 'urql/ConversationEventBatches']) {
      const received = subscribe(alice!, corpus(name), { id: group.id, sincePts: 0 })
      await received.waitFor(1)
      expect(received.errors).toEqual([])
      received.dispose()
    }
  })

  it('serves the inbox subscription live', async () => {
    const [alice, bob] = await newUsers(2, 'corpus-ws')
    const conversation = (await bob!.run(OpenPrivate, { userId: alice!.id })).openPrivateConversation
    const received = subscribe(alice!, corpus('urql/InboxEvents'))
    await waitForSubscriptions(live.server.app, alice!, 1)
    await sendText(bob!, conversation.id, 'live')
    const [event] = await received.waitFor(1)
    expect(received.errors).toEqual([])
    expect(event).toMatchObject({ inboxEvents: { __typename: 'MessageEvent', kind: 'ADDED' } })
    received.dispose()
  })

  it('refuses an abusive subscription and a 2,000-level list literal with the same errors as HTTP', async () => {
    const alice = await newUser({ prefix: 'corpus-ws' })
    const pages = subscribe(alice, corpus('refused/subscription-pages'), { id: 'x' })
    await pages.ended()
    expectRefused(pages.errors, 'nodes', 2_040_404)

    const nested = live.connect(alice.token)
    const errors = await new Promise<readonly Refusal[]>((resolve) =>
      nested.subscribe(
        { query: `{ viewer { conversations(type: ${'['.repeat(2000)}${']'.repeat(2000)}) { edges { cursor } } } }` },
        {
          next: () => {},
          error: (error) => resolve(error as Refusal[]),
          complete: () => resolve([]),
        },
      ),
    )
    expectRefused(errors, 'nesting', 2003)
    for (const error of [...pages.errors, ...errors]) expect(error.extensions).not.toHaveProperty('http')
  })
})
