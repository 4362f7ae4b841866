import { describe, expect, it } from 'vitest'
import type { AdminMessageFilter, AdminMessagesQuery } from '../gql/graphql.ts'
import { codes, newUser, newUsers, request, type TestUser } from '../support/harness.ts'
import { createGroup, OpenPrivate, SendMessage, sendText } from '../support/operations.ts'
import { AdminMessages } from '../support/views.ts'

type Row = { id: string; seq: number; kind: string; sentAt: string; content?: { text?: string } | null }

/** Every page of adminMessages, `size` at a time. */
async function all(operator: TestUser, filter: AdminMessageFilter, size = 2): Promise<Row[]> {
  const rows: Row[] = []
  let after: string | null = null
  for (;;) {
    const { adminMessages: page }: AdminMessagesQuery = await operator.run(AdminMessages, {
      filter,
      first: size,
      after,
    })
    expect(page.pageInfo.hasPreviousPage).toBe(after !== null)
    rows.push(...page.edges.map((e) => e.node as Row))
    if (!page.pageInfo.hasNextPage) return rows
    after = page.pageInfo.endCursor!
  }
}
const texts = (rows: Row[]) => rows.map((r) => r.content?.text ?? r.kind)

describe('adminMessages', () => {
  it('is for operators only: FORBIDDEN for others, UNAUTHENTICATED without a token', async () => {
    const user = await newUser()
    expect(codes(await user.try(AdminMessages, { filter: {} }))).toEqual(['FORBIDDEN'])
    expect(codes(await request(null, AdminMessages, { filter: {} }))).toEqual(['UNAUTHENTICATED'])
  })

  it('lists every message of a conversation newest first, directed ones included, paged without gaps', async () => {
    const operator = await newUser({ operator: true })
    const [alice, bob, carol] = await newUsers(3)
    const group = await createGroup(alice!, [bob!, carol!])
    for (const text of ['one', 'two', 'three']) await sendText(alice!, group.id, text)
    await alice!.run(SendMessage, {
      input: {
        conversationId: group.id,
        clientMessageId: 'directed',
        content: { text: { text: 'for bob' } },
        visibleToUserIds: [bob!.id],
      },
    })
    await sendText(carol!, group.id, 'four')
    // The operator is not a member, and sees it all.
    expect(texts(await all(operator, { conversationId: group.id }))).toEqual([
      'four',
      'for bob',
      'three',
      'two',
      'one',
      'SYSTEM',
    ])
    expect(texts(await all(operator, { conversationId: group.id, kind: 'SYSTEM' }))).toEqual(['SYSTEM'])
    expect(texts(await all(operator, { conversationId: group.id, senderId: carol!.id }))).toEqual(['four'])
  })

  it('filters by sender across conversations, by conversation type and by a sent-at range', async () => {
    const operator = await newUser({ operator: true })
    const [alice, bob] = await newUsers(2)
    const chat = (await alice!.run(OpenPrivate, { userId: bob!.id })).openPrivateConversation
    const group = await createGroup(bob!, [alice!])
    const sent = []
    for (const [conversationId, text] of [
      [chat.id, 'p1'],
      [group.id, 'g1'],
      [chat.id, 'p2'],
      [group.id, 'g2'],
    ] as const) {
      sent.push((await sendText(alice!, conversationId, text)).message)
    }
    expect(texts(await all(operator, { senderId: alice!.id }))).toEqual(['g2', 'p2', 'g1', 'p1'])
    expect(texts(await all(operator, { senderId: alice!.id, conversationType: 'PRIVATE' }))).toEqual(['p2', 'p1'])
    expect(texts(await all(operator, { senderId: alice!.id, conversationType: 'GROUP', kind: 'TEXT' }))).toEqual([
      'g2',
      'g1',
    ])
    // sentAfter is inclusive, sentBefore exclusive.
    expect(
      texts(await all(operator, { senderId: alice!.id, sentAfter: sent[1]!.sentAt, sentBefore: sent[3]!.sentAt })),
    ).toEqual(['p2', 'g1'])
    // SYSTEM messages have no sender, though Bob's createGroup caused one.
    expect(texts(await all(operator, { senderId: bob!.id }))).toEqual([])
  })

  it('pages the unfiltered view newest first and checks its arguments', async () => {
    const operator = await newUser({ operator: true })
    const page = (await operator.run(AdminMessages, { filter: {}, first: 5 })).adminMessages
    const times = page.edges.map((e) => Date.parse(e.node.sentAt))
    expect(times).toEqual([...times].sort((a, b) => b - a))
    expect(codes(await operator.try(AdminMessages, { filter: {}, first: 101 }))).toEqual(['BAD_USER_INPUT'])
    expect(codes(await operator.try(AdminMessages, { filter: {}, after: 'bogus' }))).toEqual(['BAD_USER_INPUT'])
    expect(codes(await operator.try(AdminMessages, { filter: { senderId: 'nope' } }))).toEqual(['BAD_USER_INPUT'])
  })
})
