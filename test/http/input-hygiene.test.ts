import type { VariablesOf } from '@graphql-typed-document-node/core'
import { print } from 'graphql'
import { describe, expect, it } from 'vitest'
import { signToken } from '../../src/http/auth/hs256.ts'
import { LIMITS } from '../../src/domain/core/limits.ts'
import {
  AUTH_SECRET,
  codes,
  newUser,
  newUsers,
  request,
  testApp,
  type GraphQLResponse,
  type TestUser,
} from '../support/harness.ts'
import { EditMessage } from '../support/lifecycle.ts'
import { ConversationEvents } from '../support/live.ts'
import {
  ConversationState,
  createGroup,
  CreateGroup,
  SendMessage,
  sendText,
  SetTitle,
  UpsertUsers,
} from '../support/operations.ts'
import { Search } from '../support/search.ts'
import { liveServer, subscribeWs } from '../support/server.ts'
import WebSocket from 'ws'

/** Answers one raw HTTP request through the whole Yoga pipeline: the status and the parsed body. */
async function raw(init: {
  method?: string
  body?: Uint8Array
  token?: string
  query?: string
}): Promise<{ status: number; body: GraphQLResponse<unknown> }> {
  const response = await testApp().server.yoga.fetch(`http://parley.test/graphql${init.query ?? ''}`, {
    method: init.method ?? 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json',
      ...(init.token ? { authorization: `Bearer ${init.token}` } : {}),
    },
    ...(init.body ? { body: init.body as BodyInit } : {}),
  })
  return { status: response.status, body: (await response.json()) as GraphQLResponse<unknown> }
}

/**
 * A JSON request body with `marker` (in its JSON text) replaced by raw bytes: invalid UTF-8, or JSON
 * nested too deep for JSON.stringify, cannot be written any other way.
 */
function bodyWith(payload: unknown, marker: string, bytes: Uint8Array): Uint8Array {
  const [before, after] = JSON.stringify(payload).split(marker) as [string, string]
  return Buffer.concat([Buffer.from(before), bytes, Buffer.from(after)])
}

const state = async (user: TestUser, id: string) => (await user.run(ConversationState, { id })).conversation!

/** SendMessage's variables; `content` may be what the types forbid (the server must refuse it, not the compiler). */
const sendVariables = (conversationId: string, clientMessageId: string, content: Record<string, unknown>) =>
  ({ input: { conversationId, clientMessageId, content } }) as unknown as VariablesOf<typeof SendMessage>

describe('request bodies that are not valid UTF-8', () => {
  it('are refused with 400 before any resolver runs, and store nothing', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    const before = await state(alice!, group.id)
    const query = print(SendMessage)
    const invalid = [[0xc0, 0xaf], [0xff], [0xed, 0xa0, 0x80], [0xe2, 0x82], [0xf8, 0x88, 0x80, 0x80, 0x80]]
    for (const bytes of invalid) {
      for (const variables of [
        sendVariables(group.id, 'id-@@', { text: { text: 'hi' } }),
        sendVariables(group.id, `t-${bytes.join(',')}`, { text: { text: 'a @@ b' } }),
      ]) {
        const { status, body } = await raw({
          token: alice!.token,
          body: bodyWith({ query, variables }, '@@', Buffer.from(bytes)),
        })
        expect(status, `bytes ${bytes.join(',')}`).toBe(400)
        expect(codes(body)).toEqual(['BAD_USER_INPUT'])
        expect(body.errors![0]!.message).toMatch(/not valid UTF-8/)
      }
    }
    expect(await state(alice!, group.id)).toEqual(before)
    // Valid multi-byte UTF-8 arrives exactly as sent.
    const text = 'héllo 你好 😀'
    const { status, body } = await raw({
      token: alice!.token,
      body: Buffer.from(JSON.stringify({ query, variables: sendVariables(group.id, 'ok-😀', { text: { text } }) })),
    })
    expect(status).toBe(200)
    expect(
      (body.data as { sendMessage: { message: { content: { text: string }; clientMessageId: string } } }).sendMessage
        .message,
    ).toMatchObject({ content: { text }, clientMessageId: 'ok-😀' })
  })
})

describe('GET and POST parameters that are not JSON', () => {
  it('answer the same 400 over GET as over POST', async () => {
    const user = await newUser()
    const post = await raw({
      token: user.token,
      body: Buffer.from('{"query": "{ viewer { user { id } } }", "variables": {'),
    })
    const get = await raw({
      method: 'GET',
      token: user.token,
      query: `?query=${encodeURIComponent('{ viewer { user { id } } }')}&variables=${encodeURIComponent('{not json')}`,
    })
    const getExtensions = await raw({
      method: 'GET',
      token: user.token,
      query: `?query=${encodeURIComponent('{ viewer { user { id } } }')}&extensions=nope`,
    })
    const getBytes = await raw({
      method: 'GET',
      token: user.token,
      query: `?query=${encodeURIComponent('{ viewer { user { id } } }')}&variables=%7B%22a%22%3A%22%C0%AF%22%7D`,
    })
    for (const [name, answer] of Object.entries({ post, get, getExtensions, getBytes })) {
      expect(answer.status, name).toBe(400)
      expect(codes(answer.body), name).toEqual(['BAD_USER_INPUT'])
    }
    for (const body of ['null', '42', '"text"', '']) {
      const answer = await raw({ token: user.token, body: Buffer.from(body) })
      expect(answer.status, body).toBe(400)
      expect(codes(answer.body), body).toEqual(['BAD_USER_INPUT'])
    }
    // Well-formed GET still works.
    const ok = await raw({
      method: 'GET',
      token: user.token,
      query: `?query=${encodeURIComponent('query($n: Int) { viewer { conversations(first: $n) { edges { cursor } } } }')}&variables=${encodeURIComponent('{"n": 1}')}`,
    })
    expect(ok.status).toBe(200)
    expect(ok.body.errors).toBeUndefined()
  })
})

const NUL = 'a\u0000b'
const LONE = 'a\ud800b'

describe('strings PostgreSQL cannot store', () => {
  it('are BAD_USER_INPUT wherever they enter over HTTP, and change nothing', async () => {
    const [alice, bob] = await newUsers(2)
    const operator = await newUser({ operator: true })
    const group = await createGroup(alice!, [bob!], 'SHARED', 'the title')
    const sent = await sendText(alice!, group.id, 'original')
    const before = await state(alice!, group.id)
    const file = (name: string) => ({ file: { url: 'https://x.test/f', name, sizeBytes: 1 } })
    for (const bad of [NUL, LONE]) {
      const cases: [string, Promise<GraphQLResponse<unknown>>][] = [
        ['text', alice!.try(SendMessage, sendVariables(group.id, `c-${Math.random()}`, { text: { text: bad } }))],
        ['clientMessageId', alice!.try(SendMessage, sendVariables(group.id, bad, { text: { text: 'x' } }))],
        ['file name', alice!.try(SendMessage, sendVariables(group.id, `c-${Math.random()}`, file(bad)))],
        [
          'card value',
          alice!.try(
            SendMessage,
            sendVariables(group.id, `c-${Math.random()}`, {
              card: { cardType: 'poll', data: { q: [1, { deep: bad }] } },
            }),
          ),
        ],
        [
          'card key',
          alice!.try(
            SendMessage,
            sendVariables(group.id, `c-${Math.random()}`, { card: { cardType: 'poll', data: { [bad]: 1 } } }),
          ),
        ],
        ['edit text', alice!.try(EditMessage, { messageId: sent.message.id, text: bad })],
        ['title', alice!.try(SetTitle, { conversationId: group.id, title: bad })],
        ['new group title', alice!.try(CreateGroup, { input: { title: bad, memberIds: [bob!.id] } })],
        ['handle', operator.try(UpsertUsers, { users: [{ handle: `h-${bad}`, displayName: 'x' }] })],
        ['display name', operator.try(UpsertUsers, { users: [{ handle: `h-${Math.random()}`, displayName: bad }] })],
        ['search', alice!.try(Search, { query: bad })],
      ]
      // (A lone surrogate escape in the document is graphql-js's own syntax error: below.)
      if (bad === NUL) {
        const literal = `mutation { sendMessage(input: { conversationId: "${group.id}", clientMessageId: "lit", content: { text: { text: ${JSON.stringify(bad)} } } }) { deduplicated } }`
        cases.push(['literal', request(alice!.token, literal)])
      }
      for (const [name, answer] of cases) {
        const response = await answer
        expect(codes(response), `${name} ${JSON.stringify(bad)}`).toEqual(['BAD_USER_INPUT'])
      }
    }
    // graphql-js itself refuses a lone surrogate escape in the document.
    const loneLiteral = await request(
      alice!.token,
      `mutation { setConversationTitle(conversationId: "${group.id}", title: "\\uD800") { title } }`,
    )
    expect(codes(loneLiteral)).toEqual(['GRAPHQL_PARSE_FAILED'])
    expect(await state(alice!, group.id)).toEqual(before)
    const title = await request(alice!.token, `query($id: ID!) { conversation(id: $id) { title } }`, { id: group.id })
    expect(title.data).toEqual({ conversation: { title: 'the title' } })
    // A surrogate pair is a character like any other.
    expect((await sendText(alice!, group.id, 'pair 😀')).message.content).toEqual({
      __typename: 'TextContent',
      text: 'pair 😀',
    })
  })

  it('in a token: the handle and name claims are refused, nothing is created', async () => {
    for (const token of [
      await signToken(AUTH_SECRET, `h-${NUL}`),
      await signToken(AUTH_SECRET, `h-${Math.random()}`, { name: LONE }),
    ]) {
      expect(codes(await request(token, '{ viewer { user { id } } }'))).toEqual(['UNAUTHENTICATED'])
    }
  })

  it('among concurrent sends to one conversation (coalesced): only the bad send fails, refused before it joins a batch; the other 23 commit', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    const before = await state(alice!, group.id)
    const sends = Array.from({ length: 24 }, (_, i) =>
      (i % 2 ? alice! : bob!).try(
        SendMessage,
        sendVariables(group.id, `batch-${i}`, { text: { text: i === 11 ? NUL : `m${i}` } }),
      ),
    )
    const answers = await Promise.all(sends)
    expect(codes(answers[11]!)).toEqual(['BAD_USER_INPUT'])
    const seqs = answers
      .filter((_, i) => i !== 11)
      .map((a) => (a.data as { sendMessage: { message: { seq: number } } }).sendMessage.message.seq)
    expect(seqs.sort((a, b) => a - b)).toEqual(Array.from({ length: 23 }, (_, i) => before.lastSeq + 1 + i))
    expect((await state(alice!, group.id)).lastSeq).toBe(before.lastSeq + 23)
  })
})

describe('over graphql-ws', () => {
  const live = liveServer()

  it('strings that cannot be stored, and nesting past the limit, are the operation error; the socket stays up', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    const before = await state(alice!, group.id)
    const client = live.connect(alice!.token)
    const send = subscribeWs(
      client,
      SendMessage,
      sendVariables(group.id, `ws-${Math.random()}`, { text: { text: NUL } }),
    )
    await send.ended()
    expect(send.errors.map((e) => e.extensions?.code)).toEqual(['BAD_USER_INPUT'])
    const subscription = subscribeWs(client, ConversationEvents, { conversationId: `${group.id}${NUL}` })
    await subscription.ended()
    expect(subscription.errors.map((e) => e.extensions?.code)).toEqual(['BAD_USER_INPUT'])
    const nested = `mutation { setConversationTitle(conversationId: "${group.id}", title: ${'['.repeat(2_000)}"x"${']'.repeat(2_000)}) { title } }`
    const deep = subscribeWs(client, nested as never)
    await deep.ended()
    expect(deep.errors.map((e) => e.extensions?.code)).toEqual(['QUERY_TOO_COMPLEX'])
    const ok = subscribeWs(
      client,
      SendMessage,
      sendVariables(group.id, `ws-ok-${Math.random()}`, { text: { text: 'fine' } }),
    )
    expect((await ok.waitFor(1)).length).toBe(1)
    expect((await state(alice!, group.id)).lastSeq).toBe(before.lastSeq + 1)
  })
})

describe('graphql-ws frames that are not valid UTF-8', () => {
  const live = liveServer()

  it('close the socket with 1007, text and binary frames alike', async () => {
    const user = await newUser()
    const init = Buffer.concat([
      Buffer.from(`{"type":"connection_init","payload":{"authorization":"Bearer ${user.token}","x":"`),
      Buffer.from([0xc0, 0xaf]),
      Buffer.from('"}}'),
    ])
    for (const binary of [false, true]) {
      const socket = new WebSocket(live.server.wsUrl, 'graphql-transport-ws')
      await new Promise((resolve) => socket.once('open', resolve))
      const closed = new Promise<number>((resolve) => socket.once('close', resolve))
      socket.on('error', () => {})
      socket.send(init, { binary })
      expect(await closed, binary ? 'binary' : 'text').toBe(1007)
    }
  })
})

describe('card data', () => {
  /** `levels` objects nested in each other, as JSON text (a JS object this deep would overflow JSON.stringify here too). */
  const nested = (levels: number) => Buffer.from(`${'{"d":'.repeat(levels - 1)}{"leaf":1}${'}'.repeat(levels - 1)}`)
  const sendCard = (user: TestUser, conversationId: string, key: string, data: Uint8Array) =>
    raw({
      token: user.token,
      body: bodyWith(
        {
          query: print(SendMessage),
          variables: sendVariables(conversationId, key, { card: { cardType: 'deep', data: '@@' } }),
        },
        '"@@"',
        data,
      ),
    })

  it(`nests at most ${LIMITS.cardDataDepth} levels, checked without recursion; deeper (5,000 levels) is BAD_USER_INPUT`, async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    const before = await state(alice!, group.id)
    const arrays = Buffer.from(`{"a":${'['.repeat(5_000)}${']'.repeat(5_000)}}`)
    for (const [name, data] of [
      ['limit + 1', nested(LIMITS.cardDataDepth + 1)],
      ['5,000', nested(5_000)],
      ['15,000', nested(15_000)],
      ['arrays', arrays],
    ] as const) {
      const { status, body } = await sendCard(alice!, group.id, `card-${name}`, data)
      expect(status, name).toBe(200)
      expect(codes(body), name).toEqual(['BAD_USER_INPUT'])
      expect(body.errors![0]!.message).toMatch(/levels deep/)
    }
    const big = await sendCard(
      alice!,
      group.id,
      'card-big',
      Buffer.from(JSON.stringify({ s: 'x'.repeat(LIMITS.cardDataBytes) })),
    )
    expect(codes(big.body)).toEqual(['BAD_USER_INPUT'])
    expect(await state(alice!, group.id)).toEqual(before)
    const atLimit = await sendCard(alice!, group.id, 'card-ok', nested(LIMITS.cardDataDepth))
    expect(atLimit.body.errors).toBeUndefined()
    expect((await state(alice!, group.id)).lastSeq).toBe(before.lastSeq + 1)
  })
})
