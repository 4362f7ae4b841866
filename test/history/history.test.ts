import type { ResultOf } from '@graphql-typed-document-node/core'
import { beforeAll, describe, expect, it } from 'vitest'
import { parseId } from '../../src/domain/core/ids.ts'
import { appendMessages } from '../../src/store/messages.ts'
import { codes, newUsers, testApp, type TestUser } from '../support/harness.ts'
import { createGroup, History } from '../support/operations.ts'
import { Around, OneMessage } from '../support/views.ts'

type Page = NonNullable<ResultOf<typeof History>['conversation']>['messages']

const TOTAL = 501 // the CONVERSATION_CREATED system message + 500 texts

let reader: TestUser
let conversationId: string

beforeAll(async () => {
  const [owner, member] = await newUsers(2)
  reader = member!
  conversationId = (await createGroup(owner!, [member!])).id
  // Seeded in one statement through the store: this file is about reading, send has its own tests.
  const numericId = parseId(conversationId, 'Conversation')
  const ownerId = parseId(owner!.id, 'User')
  await testApp().db.$transaction(async (tx) => {
    const drafts = Array.from({ length: 500 }, (_, i) => ({
      senderType: 'USER' as const,
      senderId: ownerId,
      kind: 'TEXT' as const,
      clientMessageId: `h-${i}`,
      content: { text: `message ${i + 2}` },
      quotedSeq: null,
      mentionUserIds: [],
      mentionAll: false,
      visibleTo: [],
    }))
    await appendMessages(tx, numericId, { lastSeq: 1, lastPts: 1 }, drafts)
  })
})

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i)

describe('Conversation.messages', () => {
  it('returns the newest 20 in ascending order without arguments', async () => {
    const page = (await reader.run(History, { id: conversationId })).conversation!.messages
    expect(page.edges.map((e) => e.node.seq)).toEqual(range(TOTAL - 19, TOTAL))
    expect(page.pageInfo).toMatchObject({ hasPreviousPage: true, hasNextPage: false })
    expect(page.pageInfo.startCursor).toBe(page.edges[0]!.cursor)
    expect(page.pageInfo.endCursor).toBe(page.edges.at(-1)!.cursor)
  })

  it('walks all messages backwards, each seq exactly once, with exact pageInfo', async () => {
    const seen: number[] = []
    let before: string | null = null
    for (let pageNo = 0; ; pageNo++) {
      const page: Page = (await reader.run(History, { id: conversationId, last: 37, before })).conversation!.messages
      const seqs = page.edges.map((e) => e.node.seq)
      expect(seqs).toEqual([...seqs].sort((a, b) => a - b))
      expect(page.pageInfo.hasNextPage).toBe(pageNo > 0)
      seen.unshift(...seqs)
      if (!page.pageInfo.hasPreviousPage) break
      before = page.pageInfo.startCursor
    }
    expect(seen).toEqual(range(1, TOTAL))
  })

  it('walks all messages forwards, each seq exactly once, with exact pageInfo', async () => {
    const seen: number[] = []
    let after: string | null = null
    for (let pageNo = 0; ; pageNo++) {
      const page: Page = (await reader.run(History, { id: conversationId, first: 50, after })).conversation!.messages
      expect(page.pageInfo.hasPreviousPage).toBe(pageNo > 0)
      seen.push(...page.edges.map((e) => e.node.seq))
      if (!page.pageInfo.hasNextPage) break
      after = page.pageInfo.endCursor
    }
    expect(seen).toEqual(range(1, TOTAL))
  })

  it('turns around: back from the middle, then forward again from the same cursor', async () => {
    const middle = (await reader.run(Around, { id: conversationId, seq: 250, count: 1 })).conversation!.messagesAround
    const cursor = middle.pageInfo.startCursor!
    const older = (await reader.run(History, { id: conversationId, last: 5, before: cursor })).conversation!.messages
    const newer = (await reader.run(History, { id: conversationId, first: 5, after: cursor })).conversation!.messages
    expect(older.edges.map((e) => e.node.seq)).toEqual(range(245, 249))
    expect(newer.edges.map((e) => e.node.seq)).toEqual(range(251, 255))
    expect(older.pageInfo).toMatchObject({ hasPreviousPage: true, hasNextPage: true })
    expect(newer.pageInfo).toMatchObject({ hasPreviousPage: true, hasNextPage: true })
  })

  it('answers an empty page past either end, still saying what lies behind the cursor', async () => {
    const first = (await reader.run(Around, { id: conversationId, seq: 1, count: 1 })).conversation!.messagesAround
      .pageInfo.startCursor
    const last = (await reader.run(Around, { id: conversationId, seq: TOTAL, count: 1 })).conversation!.messagesAround
      .pageInfo.endCursor
    const beforeFirst = (await reader.run(History, { id: conversationId, last: 5, before: first })).conversation!
      .messages
    expect(beforeFirst.edges).toEqual([])
    expect(beforeFirst.pageInfo).toMatchObject({ hasPreviousPage: false, hasNextPage: true })
    const afterLast = (await reader.run(History, { id: conversationId, first: 5, after: last })).conversation!.messages
    expect(afterLast.edges).toEqual([])
    expect(afterLast.pageInfo).toMatchObject({ hasPreviousPage: true, hasNextPage: false })
  })

  it('rejects page sizes over 100, negative sizes, first with last, and foreign cursors', async () => {
    for (const vars of [
      { first: 101 },
      { last: 101 },
      { first: -1 },
      { first: 5, last: 5 },
      { after: 'bm90LWEtY3Vyc29y' },
      { before: '%%%' },
    ]) {
      const response = await reader.try(History, { id: conversationId, ...vars })
      expect(codes(response), JSON.stringify(vars)).toEqual(['BAD_USER_INPUT'])
    }
  })
})

describe('Conversation.messagesAround and message(seq)', () => {
  it('centres a window on the anchor with both directions open', async () => {
    const around = (await reader.run(Around, { id: conversationId, seq: 300, count: 10 })).conversation!.messagesAround
    expect(around.edges.map((e) => e.node.seq)).toEqual(range(295, 304))
    expect(around.pageInfo).toMatchObject({ hasPreviousPage: true, hasNextPage: true })
    const next = (await reader.run(History, { id: conversationId, first: 3, after: around.pageInfo.endCursor }))
      .conversation!.messages
    expect(next.edges.map((e) => e.node.seq)).toEqual([305, 306, 307])
  })

  it('clips at both ends of the history', async () => {
    const start = (await reader.run(Around, { id: conversationId, seq: 1, count: 6 })).conversation!.messagesAround
    expect(start.edges.map((e) => e.node.seq)).toEqual(range(1, 3))
    expect(start.pageInfo.hasPreviousPage).toBe(false)
    const end = (await reader.run(Around, { id: conversationId, seq: TOTAL, count: 6 })).conversation!.messagesAround
    expect(end.edges.map((e) => e.node.seq)).toEqual(range(TOTAL - 3, TOTAL))
    expect(end.pageInfo.hasNextPage).toBe(false)
  })

  it('rejects a count outside 1..100', async () => {
    expect(codes(await reader.try(Around, { id: conversationId, seq: 5, count: 101 }))).toEqual(['BAD_USER_INPUT'])
    expect(codes(await reader.try(Around, { id: conversationId, seq: 5, count: 0 }))).toEqual(['BAD_USER_INPUT'])
  })

  it('reads one message by seq, and null past the end', async () => {
    const found = await reader.run(OneMessage, { id: conversationId, seq: 42 })
    expect(found.conversation!.message).toEqual({ seq: 42, content: { text: 'message 42' } })
    expect((await reader.run(OneMessage, { id: conversationId, seq: TOTAL + 1 })).conversation!.message).toBeNull()
  })
})
