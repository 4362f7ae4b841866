import type { Client } from 'graphql-ws'
import { describe, expect, it } from 'vitest'
import { encodeGlobalId } from '../../src/domain/core/ids.ts'
import { newUsers, request, testApp, type GraphQLResponse, type TestUser } from '../support/harness.ts'
import { createGroup, sendText } from '../support/operations.ts'
import { seededRandom } from '../support/random.ts'
import { liveServer } from '../support/server.ts'

/**
 * Hostile input through the public API: every case is a valid operation with one value made wrong
 * (wrong type, NUL, unpaired surrogate, over-long, invalid UTF-8, deep JSON, bad ids and enums, @oneOf
 * with zero or two members, malformed documents and bodies), over HTTP and graphql-ws. No case may
 * answer 5xx or INTERNAL_SERVER_ERROR, every case must be refused, and nothing stored may change.
 * FUZZ_SEED reruns a printed seed; FUZZ_CASES sets how many.
 */
const SEED = Number(process.env.FUZZ_SEED ?? 20261201)
const CASES = Number(process.env.FUZZ_CASES ?? 400)

/** Raw bytes that are not UTF-8, spliced into an HTTP body where this marker string stands. */
const INVALID_UTF8 = '\u{1F9EA}invalid-utf8\u{1F9EA}'
/** Card data nested this deep, spliced into an HTTP body as JSON text (JSON.stringify would overflow). */
const DEEP_JSON = '\u{1F9EA}deep-json\u{1F9EA}'

const nested = (levels: number): unknown => {
  let value: unknown = 1
  for (let i = 0; i < levels; i++) value = { d: value }
  return value
}

/** Values that are wrong wherever a value of each kind is expected (null only where the field is required). */
const BAD = {
  text: [
    '',
    '   \n\t',
    'x'.repeat(10_001),
    'a\u0000b',
    '\u0000',
    'a\ud800',
    '\udfffz',
    INVALID_UTF8,
    42,
    true,
    { text: 'x' },
    ['x'],
    null,
  ],
  short: ['', ' ', 'x'.repeat(201), 'a\u0000', 'b\udc00', INVALID_UTF8, 7, false, [], {}, null],
  key: ['', 'k'.repeat(129), 'k\u0000', 'k\ud834', INVALID_UTF8, 1, {}, null],
  id: [
    '',
    'garbage',
    '\u0000',
    'Q29udmVyc2F0aW9uOg',
    encodeGlobalId('User', 9_000_000_002),
    encodeGlobalId('Conversation', 9_000_000_001),
    encodeGlobalId('Message', '9000000001:1'),
    'x'.repeat(5_000),
    INVALID_UTF8,
    12,
    [],
  ],
  ids: [
    ['garbage'],
    [null],
    'not-a-list-of-ids',
    [encodeGlobalId('Conversation', 1)],
    Array.from({ length: 101 }, (_, i) => encodeGlobalId('User', 9_000_000_000 + i)),
    [{}],
  ],
  int: [-1, 101, 2 ** 31, -(2 ** 53), 2.5, '10', 'NaN', {}, true],
  seq: [-1, 2 ** 60, 1.5, 'x', {}, [1]],
  role: ['KING', 'owner', '', 0, null, ['ADMIN']],
  visibility: ['ALL', 'shared', 1, {}],
  search: [
    '',
    '   ',
    'a\u0000b',
    'x'.repeat(201),
    'one two three four five six seven eight nine ten eleven',
    '!!! ??? ...',
    INVALID_UTF8,
    5,
    null,
  ],
  content: [
    {},
    { text: { text: 'a' }, sticker: { stickerId: 's', url: 'https://x.test/s.png' } },
    { text: null },
    { text: { text: 'a' }, card: { cardType: 't', data: {} } },
    { nope: { text: 'a' } },
    { card: { cardType: 't', data: [1, 2] } },
    { card: { cardType: 't', data: 'string' } },
    { card: { cardType: 't', data: { k: 'v\u0000' } } },
    { card: { cardType: 't', data: { ['k\u0000']: 1 } } },
    { card: { cardType: 't', data: nested(200) } },
    { card: { cardType: 't', data: DEEP_JSON } },
    { card: { cardType: 'bad type!', data: {} } },
    { image: { url: 'javascript:alert(1)' } },
    { file: { url: 'https://x.test/f', name: 'n\u0000', sizeBytes: 1 } },
    { file: { url: 'https://x.test/f', name: 'n', sizeBytes: -5 } },
    { forward: { messageIds: [] } },
    { forward: { messageIds: ['garbage'] } },
    'text',
    null,
  ],
} as const

type Kind = keyof typeof BAD
type Template = {
  document: string
  variables: (ids: Ids) => Record<string, unknown>
  fields: Record<string, Kind>
  ws: boolean
}
type Ids = { group: string; other: string; message: string; bob: string }

const SEND = `mutation($input: SendMessageInput!) { sendMessage(input: $input) { deduplicated message { id seq } } }`

/** Valid operations (never sent as they are); each case breaks exactly one of `fields` (a dotted path into the variables). */
const TEMPLATES: Template[] = [
  {
    document: SEND,
    variables: (ids) => ({
      input: { conversationId: ids.group, clientMessageId: 'fuzz', content: { text: { text: 'hi' } } },
    }),
    fields: {
      'input.conversationId': 'id',
      'input.clientMessageId': 'key',
      'input.content': 'content',
      'input.content.text.text': 'text',
      'input.mentionUserIds': 'ids',
      'input.quotedMessageId': 'id',
      'input.visibleToUserIds': 'ids',
    },
    ws: true,
  },
  {
    document: `mutation($messageId: ID!, $content: MessageContentInput!) { editMessage(messageId: $messageId, content: $content) { id } }`,
    variables: (ids) => ({ messageId: ids.message, content: { text: { text: 'edited' } } }),
    fields: { messageId: 'id', content: 'content', 'content.text.text': 'text' },
    ws: true,
  },
  {
    document: `mutation($id: ID!, $title: String!) { setConversationTitle(conversationId: $id, title: $title) { title } }`,
    variables: (ids) => ({ id: ids.group, title: 'new title' }),
    fields: { id: 'id', title: 'short' },
    ws: true,
  },
  {
    document: `mutation($input: CreateGroupInput!) { createGroup(input: $input) { id } }`,
    variables: (ids) => ({ input: { title: 'fuzz group', memberIds: [ids.bob], historyVisibility: 'SHARED' } }),
    fields: { 'input.title': 'short', 'input.memberIds': 'ids', 'input.historyVisibility': 'visibility' },
    ws: false,
  },
  {
    document: `mutation($id: ID!, $userId: ID!, $role: MemberRole!) { setMemberRole(conversationId: $id, userId: $userId, role: $role) { role } }`,
    variables: (ids) => ({ id: ids.group, userId: ids.bob, role: 'ADMIN' }),
    fields: { id: 'id', userId: 'id', role: 'role' },
    ws: true,
  },
  {
    document: `mutation($id: ID!, $seq: SafeInt!) { markConversationRead(conversationId: $id, seq: $seq) { lastReadSeq } }`,
    variables: (ids) => ({ id: ids.group, seq: 1 }),
    fields: { id: 'id', seq: 'seq' },
    ws: true,
  },
  {
    document: `query($id: ID!, $first: Int) { conversation(id: $id) { messages(first: $first) { edges { node { seq } } } } }`,
    variables: (ids) => ({ id: ids.other, first: 5 }),
    fields: { id: 'id', first: 'int' },
    ws: true,
  },
  {
    document: `query($query: String!) { searchMessages(query: $query) { edges { node { id } } } }`,
    variables: () => ({ query: 'hello' }),
    fields: { query: 'search' },
    ws: false,
  },
  {
    document: `mutation($id: ID!, $draft: DraftInput) { saveDraft(conversationId: $id, draft: $draft) { id } }`,
    variables: (ids) => ({ id: ids.group, draft: { text: 'a draft' } }),
    fields: { id: 'id', 'draft.text': 'text', 'draft.mentionUserIds': 'ids', 'draft.quotedMessageId': 'id' },
    ws: true,
  },
  {
    document: `mutation($messageId: ID!, $emoji: String!) { addReaction(messageId: $messageId, emoji: $emoji) { id } }`,
    variables: (ids) => ({ messageId: ids.message, emoji: '👍' }),
    fields: { messageId: 'id', emoji: 'key' },
    ws: true,
  },
  {
    document: `mutation($id: ID!) { sendTyping(conversationId: $id) }`,
    variables: (ids) => ({ id: ids.other }),
    fields: { id: 'id' },
    ws: true,
  },
  {
    document: `subscription($id: ID!, $sincePts: SafeInt) { conversationEvents(conversationId: $id, sincePts: $sincePts) { __typename } }`,
    variables: (ids) => ({ id: ids.other, sincePts: 0 }),
    fields: { id: 'id', sincePts: 'seq' },
    ws: true,
  },
]

/** Documents and bodies that are wrong as a whole. */
const MALFORMED_DOCUMENTS = [
  '',
  '{',
  'mutation { sendMessage }',
  `{ viewer { conversations(first: ${'['.repeat(2_000)}1${']'.repeat(2_000)}) { edges { cursor } } } }`,
  `{ ${'viewer { user { '.repeat(40)} id ${'} } '.repeat(40)} }`,
  `{ viewer { user { id @skip(if: "yes") } } }`,
  `query { node(id: "\\u0000") { id } }`,
  `{ ${Array.from({ length: 40 }, (_, i) => `a${i}: viewer { user { id } }`).join(' ')} }`,
  'subscription { conversationEvents }',
  `{ viewer\u0000 { user { id } } }`,
]
const MALFORMED_BODIES = [
  '',
  'null',
  '[]',
  '42',
  '{"query": 5}',
  '{"query": "{ viewer { user { id } } }", "variables": "x"}',
  '{"query": "{ viewer { user { id } } }", "variables": [1]}',
  '{"query": "{ viewer',
  '\u0000',
]

function withValue(variables: Record<string, unknown>, path: string, value: unknown): Record<string, unknown> {
  const copy = structuredClone(variables)
  const keys = path.split('.')
  let target = copy
  for (const key of keys.slice(0, -1)) target = (target[key] ??= {}) as Record<string, unknown>
  target[keys.at(-1)!] = value
  return copy
}

/** The JSON text of a body, with the markers turned into what they stand for. */
function bodyBytes(payload: unknown): Uint8Array {
  const text = JSON.stringify(payload)
  const deep = `${'{"d":'.repeat(5_000)}1${'}'.repeat(5_000)}`
  const parts = text.split(`"${DEEP_JSON}"`).join(deep).split(INVALID_UTF8)
  return Buffer.concat(
    parts.flatMap((part, i) => (i ? [Buffer.from([0xc0, 0xaf]), Buffer.from(part)] : [Buffer.from(part)])),
  )
}

type Outcome = { transport: string; status?: number; codes: (string | undefined)[]; closed?: number }

async function overHttp(
  token: string,
  body: Uint8Array,
  method: 'POST' | 'GET' = 'POST',
  query = '',
): Promise<Outcome> {
  const response = await testApp().server.yoga.fetch(`http://parley.test/graphql${query}`, {
    method,
    headers: {
      'content-type': 'application/json',
      accept: 'application/graphql-response+json, application/json',
      authorization: `Bearer ${token}`,
    },
    ...(method === 'POST' ? { body: body as BodyInit } : {}),
  })
  const text = await response.text()
  let parsed: GraphQLResponse<unknown> = {}
  try {
    parsed = JSON.parse(text) as GraphQLResponse<unknown>
  } catch {
    // a 4xx without a JSON body (405, 415) is a refusal too
  }
  return { transport: method, status: response.status, codes: (parsed.errors ?? []).map((e) => e.extensions?.code) }
}

async function overWs(client: Client, query: string, variables: Record<string, unknown>): Promise<Outcome> {
  const codes: (string | undefined)[] = []
  let data = false
  await new Promise<void>((resolve) => {
    const timer = setTimeout(() => (dispose(), resolve()), 2_000)
    const dispose = client.subscribe(
      { query, variables },
      {
        next: (result) => {
          if (result.errors)
            codes.push(...result.errors.map((e) => (e.extensions as { code?: string } | undefined)?.code))
          if (result.data) data = true
        },
        error: (error) => {
          codes.push(
            ...(Array.isArray(error)
              ? error.map((e: { extensions?: { code?: string } }) => e.extensions?.code)
              : [`closed:${(error as { code?: number }).code}`]),
          )
          clearTimeout(timer)
          resolve()
        },
        complete: () => (clearTimeout(timer), resolve()),
      },
    )
  })
  return { transport: 'ws', codes: data && !codes.length ? ['DATA'] : codes }
}

async function snapshot(user: TestUser, ids: Ids) {
  const answer = await request(
    user.token,
    `query($id: ID!) {
      viewer { conversations(first: 100) { edges { node { id title lastSeq lastPts } } } }
      conversation(id: $id) { title lastSeq lastPts viewerSettings { archived doNotDisturb draft { text } } members(first: 100) { edges { node { role lastReadSeq user { id } } } }
        messages(last: 100) { edges { node { seq status editedAt reactions { emoji count } content { __typename ... on TextContent { text } } } } } }
    }`,
    { id: ids.group },
  )
  expect(answer.errors).toBeUndefined()
  return answer.data
}

describe('fuzzing the public API', () => {
  const live = liveServer()

  it(
    `answers ${CASES} hostile requests without a 5xx or INTERNAL_SERVER_ERROR, refusing each, changing nothing`,
    { timeout: 180_000 },
    async () => {
      console.log(`fuzz seed ${SEED} (FUZZ_SEED=${SEED} replays it), ${CASES} cases`)
      const random = seededRandom(SEED)
      const pick = <T>(items: readonly T[]): T => random.pick(items)!
      const [alice, bob, carol] = await newUsers(3)
      const group = await createGroup(alice!, [bob!])
      const other = await createGroup(carol!, [bob!])
      const message = await sendText(bob!, group.id, 'bob wrote this')
      const ids: Ids = { group: group.id, other: other.id, message: message.message.id, bob: bob!.id }
      const before = [await snapshot(alice!, ids), await snapshot(bob!, ids)]
      let client = live.connect(alice!.token)

      const failures: string[] = []
      const seen = new Map<string, number>()
      for (let i = 0; i < CASES; i++) {
        const shape = random.next()
        let outcome: Outcome
        let label: string
        if (shape < 0.08) {
          const document = pick(MALFORMED_DOCUMENTS)
          const ws = random.next() < 0.5
          label = `document ${JSON.stringify(document.slice(0, 60))}`
          outcome = ws
            ? await overWs(client, document, {})
            : await overHttp(alice!.token, bodyBytes({ query: document }))
        } else if (shape < 0.13) {
          const body = pick(MALFORMED_BODIES)
          label = `body ${JSON.stringify(body)}`
          outcome = await overHttp(alice!.token, Buffer.from(body))
        } else {
          const template = pick(TEMPLATES)
          const [path, kind] = pick(Object.entries(template.fields))
          const value = pick(BAD[kind] as readonly unknown[])
          const variables = withValue(template.variables(ids), path, value)
          const raw = JSON.stringify(variables).includes('\u{1F9EA}')
          const transport =
            template.ws && !raw && random.next() < 0.4
              ? 'ws'
              : template.document.startsWith('query') && !raw && random.next() < 0.3
                ? 'GET'
                : 'POST'
          label = `${template.document.slice(0, 40)} ${path}=${JSON.stringify(value)?.slice(0, 60)}`
          if (transport === 'ws') outcome = await overWs(client, template.document, variables)
          else if (transport === 'GET')
            outcome = await overHttp(
              alice!.token,
              new Uint8Array(),
              'GET',
              `?query=${encodeURIComponent(template.document)}&variables=${encodeURIComponent(JSON.stringify(variables))}`,
            )
          else outcome = await overHttp(alice!.token, bodyBytes({ query: template.document, variables }))
        }
        const refused =
          (outcome.status !== undefined && outcome.status >= 400) ||
          (outcome.codes.length > 0 && !outcome.codes.includes('DATA'))
        const broken =
          (outcome.status ?? 0) >= 500 ||
          outcome.codes.some(
            (c) => c === 'INTERNAL_SERVER_ERROR' || c === undefined || c === 'closed:4500' || c === 'closed:1011',
          )
        for (const code of outcome.codes)
          seen.set(`${outcome.transport} ${code}`, (seen.get(`${outcome.transport} ${code}`) ?? 0) + 1)
        if (broken || !refused)
          failures.push(`case ${i} ${label} over ${outcome.transport}: ${JSON.stringify(outcome)}`)
        // A socket the server closed (a refused document may end it) is replaced for the next case.
        if (outcome.codes.some((c) => c?.startsWith('closed:'))) client = live.connect(alice!.token)
      }
      console.log('fuzz outcomes', Object.fromEntries([...seen].sort()))
      expect(failures).toEqual([])
      expect([await snapshot(alice!, ids), await snapshot(bob!, ids)]).toEqual(before)
    },
  )
})
