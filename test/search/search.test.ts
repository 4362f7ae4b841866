import { describe, expect, it } from 'vitest'
import type { MessageContentInput } from '../gql/graphql.ts'
import { codes, newUser, newUsers, testApp, type TestUser } from '../support/harness.ts'
import { createGroup, SendMessage } from '../support/operations.ts'
import { Search } from '../support/search.ts'

let counter = 0
async function send(user: TestUser, conversationId: string, content: MessageContentInput) {
  const input = { conversationId, clientMessageId: `search-${process.pid}-${++counter}`, content }
  return (await user.run(SendMessage, { input })).sendMessage.message
}
const sendText = (user: TestUser, conversationId: string, text: string) =>
  send(user, conversationId, { text: { text } })

/** The snippets of every result, newest first. */
const snippets = async (user: TestUser, query: string, filter?: Record<string, unknown>) =>
  (await user.run(Search, { query, filter, first: 100 })).searchMessages.edges.map((e) => e.snippet)

describe('searchMessages matching', () => {
  it('matches Chinese and Japanese by substring from one character, other scripts by word prefix, ignoring case, width and accents', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    const texts = [
      '今天请假审批过了吗',
      '明天开会',
      "Café au lait, s'il vous plaît",
      'カタカナのテスト',
      'Quarterly BUDGET review',
      'reviewing the budget',
      'ＦＵＬＬ width and 한국어 문장',
    ]
    for (const text of texts) await sendText(alice!, group.id, text)
    const newestFirst = (...picked: number[]) => picked.sort((a, b) => b - a).map((i) => texts[i]!)
    const cases: [string, string[]][] = [
      ['假', newestFirst(0)],
      ['请假', newestFirst(0)],
      ['审批过了', newestFirst(0)],
      ['天', newestFirst(0, 1)],
      ['天请', newestFirst(0)],
      ['今请', []],
      ['cafe', newestFirst(2)],
      ['CAF', newestFirst(2)],
      ['plait', newestFirst(2)],
      ['ait', []],
      // A word with a quote in it, and a phrase: the per-conversation words keep the lexeme and its positions.
      ["s'il", newestFirst(2)],
      ['"vous plaît"', newestFirst(2)],
      ['"plaît vous"', []],
      ['カタ', newestFirst(3)],
      ['ｶﾀｶﾅ', newestFirst(3)],
      ['テスト', newestFirst(3)],
      ['budget review', newestFirst(4, 5)],
      ['bud rev', newestFirst(4, 5)],
      ['"budget review"', newestFirst(4)],
      ['“review the”', []],
      ['"reviewing the"', newestFirst(5)],
      ['budget 明天', []],
      ['full', newestFirst(6)],
      ['한국', newestFirst(6)],
    ]
    for (const [query, expected] of cases) expect(await snippets(bob!, query), query).toEqual(expected)
  })

  it('searches file names, card and material titles and the text of forwarded items, not media', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    await send(alice!, group.id, {
      file: { url: 'https://files.example/budget.pdf', name: '季度报告.pdf', sizeBytes: 10 },
    })
    await send(alice!, group.id, {
      card: { cardType: 'approval', data: { title: 'Leave approval', note: 'hidden words' } },
    })
    await send(alice!, group.id, {
      material: { title: 'Onboarding guide', digest: 'secret digest', url: 'https://docs.example/guide' },
    })
    await send(alice!, group.id, { image: { url: 'https://images.example/budget.png' } })
    const source = await sendText(bob!, group.id, 'forwardable words')
    const forward = await send(alice!, group.id, { forward: { messageIds: [source.id] } })
    const kindsOf = async (query: string) =>
      (await alice!.run(Search, { query })).searchMessages.edges.map((e) => e.node.kind)
    expect(await kindsOf('报告')).toEqual(['FILE'])
    expect(await kindsOf('leave approval')).toEqual(['CARD'])
    expect(await kindsOf('hidden')).toEqual([])
    expect(await kindsOf('onboarding')).toEqual(['MATERIAL'])
    expect(await kindsOf('secret')).toEqual([])
    expect(await kindsOf('budget')).toEqual([])
    expect(await kindsOf('forwardable')).toEqual(['FORWARD', 'TEXT'])
    const [hit] = (await alice!.run(Search, { query: 'forwardable', filter: { kinds: ['FORWARD'] } })).searchMessages
      .edges
    expect(hit).toMatchObject({
      node: { id: forward.id },
      snippet: 'forwardable words',
      highlights: [{ start: 0, length: 11 }],
    })
  })

  it('cuts a snippet of at most 200 characters around the first match, with highlights in UTF-16 units', async () => {
    const [alice] = await newUsers(1)
    const group = await createGroup(alice!, [])
    await sendText(alice!, group.id, '😀 今天请假 ok')
    await sendText(alice!, group.id, 'budget and review')
    await sendText(alice!, group.id, `${'filler '.repeat(60)}needle ${'words '.repeat(60)}`)
    await sendText(alice!, group.id, `${'😀'.repeat(150)} pin ${'😀'.repeat(150)}`)
    const hits = async (query: string) => (await alice!.run(Search, { query })).searchMessages.edges
    expect((await hits('请假'))[0]).toMatchObject({ snippet: '😀 今天请假 ok', highlights: [{ start: 5, length: 2 }] })
    expect((await hits('review bud'))[0]).toMatchObject({
      highlights: [
        { start: 0, length: 6 },
        { start: 11, length: 6 },
      ],
    })
    for (const word of ['needle', 'pin']) {
      const { snippet, highlights } = (await hits(word))[0]!
      expect(snippet.length, word).toBeLessThanOrEqual(200)
      expect(snippet.startsWith('…') && snippet.endsWith('…'), word).toBe(true)
      expect(highlights.map((h) => snippet.slice(h.start, h.start + h.length))).toEqual([word])
      // No half of a surrogate pair at either cut.
      expect(snippet).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/)
    }
  })

  it('filters by conversation, sender, kinds and time range', async () => {
    const [alice, bob] = await newUsers(2)
    const first = await createGroup(alice!, [bob!])
    const second = await createGroup(alice!, [bob!])
    const a1 = await sendText(alice!, first.id, 'report one')
    const b1 = await sendText(bob!, first.id, 'report two')
    const a2 = await send(alice!, second.id, {
      file: { url: 'https://files.example/r', name: 'report three', sizeBytes: 1 },
    })
    const ids = async (filter: Record<string, unknown>) =>
      (await alice!.run(Search, { query: 'report', filter })).searchMessages.edges.map((e) => e.node.id)
    expect(await ids({})).toEqual([a2.id, b1.id, a1.id])
    expect(await ids({ conversationId: first.id })).toEqual([b1.id, a1.id])
    expect(await ids({ senderId: alice!.id })).toEqual([a2.id, a1.id])
    expect(await ids({ kinds: ['FILE'] })).toEqual([a2.id])
    expect(await ids({ kinds: ['TEXT', 'FILE'], senderId: bob!.id })).toEqual([b1.id])
    expect(await ids({ sentAfter: b1.sentAt })).toEqual([a2.id, b1.id])
    expect(await ids({ sentBefore: b1.sentAt })).toEqual([a1.id])
    expect(await ids({ sentAfter: b1.sentAt, sentBefore: a2.sentAt })).toEqual([b1.id])
  })

  it('finds the same for a viewer in more conversations than a word query looks up one by one (over 200)', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    const texts = ['zebra crossing', 'crossing zebras', 'no stripes']
    for (const text of texts) await sendText(alice!, group.id, text)
    const found = async () => snippets(bob!, 'zebra cross')
    expect(await found()).toEqual([texts[1], texts[0]])
    // 200 more (empty) groups for bob, written directly: past 200 the query goes to the documents' index.
    await testApp().db.$executeRaw`
      WITH groups AS (INSERT INTO conversations (type, title, history_visibility) SELECT 'GROUP', 'filler', 'SHARED' FROM generate_series(1, 200) RETURNING id)
      INSERT INTO conversation_members (conversation_id, user_id, role) SELECT g.id, u.id, 'MEMBER' FROM groups g, users u WHERE u.handle = ${bob!.handle}`
    expect(await found()).toEqual([texts[1], texts[0]])
    expect(await snippets(bob!, 'zebra', { conversationId: group.id })).toEqual([texts[1], texts[0]])
  })

  it('refuses empty, too long, too many words, NUL and unsearchable queries with BAD_USER_INPUT', async () => {
    const user = await newUser()
    const bad = [
      '',
      '   ',
      'a'.repeat(201),
      'one two three four five six seven eight nine ten eleven',
      'a\u0000b',
      '!!! ???',
      '""',
    ]
    for (const query of bad)
      expect(codes(await user.try(Search, { query })), JSON.stringify(query)).toEqual(['BAD_USER_INPUT'])
    expect(codes(await user.try(Search, { query: 'ok', filter: { kinds: [] } }))).toEqual(['BAD_USER_INPUT'])
    expect(codes(await user.try(Search, { query: 'ok', first: 101 }))).toEqual(['BAD_USER_INPUT'])
    expect(codes(await user.try(Search, { query: 'ok', after: 'not-a-cursor' }))).toEqual(['BAD_USER_INPUT'])
    // The limits themselves are fine.
    for (const query of ['a'.repeat(200), 'one two three four five six seven eight nine ten'])
      expect(codes(await user.try(Search, { query }))).toEqual([])
  })
})
