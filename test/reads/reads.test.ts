import type { ResultOf } from '@graphql-typed-document-node/core'
import { describe, expect, it } from 'vitest'
import { parseId } from '../../src/domain/core/ids.ts'
import { userTopic, type RealtimeEvent } from '../../src/realtime/events.ts'
import { codes, countStatements, newUser, newUsers, request, testApp, type TestUser } from '../support/harness.ts'
import { listen } from '../support/lifecycle.ts'
import {
  CreateChannel,
  createGroup,
  lastSeqOf,
  LeaveConversation,
  MarkRead,
  OpenPrivate,
  SendMessage,
  sendText,
  SubscribeChannel,
} from '../support/operations.ts'
import { InboxUnread, ReadState } from '../support/readViews.ts'

const markRead = async (user: TestUser, conversationId: string, seq?: number) =>
  (await user.run(MarkRead, { conversationId, seq })).markConversationRead.lastReadSeq
const readState = async (user: TestUser, id: string) => (await user.run(ReadState, { id })).conversation!

/** Records the read events published to a user's topic (the in-process bus the subscriptions read). */
async function recordReads(user: TestUser) {
  const feed = await listen(testApp().app.realtime, userTopic(parseId(user.id, 'User')))
  return {
    /** Stops listening; the read events published meanwhile. */
    async stop() {
      await feed.stop()
      return (await feed.seen()).filter((e): e is Extract<RealtimeEvent, { type: 'read' }> => e.type === 'read')
    },
  }
}

/** A group of `owner` and `member` with `count` texts from the owner; returns its id and lastSeq. */
async function groupWithTexts(owner: TestUser, member: TestUser, count: number) {
  const group = await createGroup(owner, [member])
  for (let i = 0; i < count; i++) await sendText(owner, group.id, `t${i}`)
  return { id: group.id, lastSeq: group.lastSeq + count }
}

describe('markConversationRead', () => {
  it('defaults to lastSeq, clamps beyond it, and never moves backwards (no event for a no-op)', async () => {
    const [owner, member] = await newUsers(2)
    const group = await groupWithTexts(owner!, member!, 5) // seqs 1 (system) .. 6
    const reads = await recordReads(member!)
    expect(await readState(member!, group.id)).toMatchObject({ unreadCount: 5, viewerMember: { lastReadSeq: 0 } })

    expect(await markRead(member!, group.id, 3)).toBe(3)
    expect(await readState(member!, group.id)).toMatchObject({ unreadCount: 3, viewerMember: { lastReadSeq: 3 } })
    // Older and equal seqs answer with the current position and store nothing.
    expect(await markRead(member!, group.id, 2)).toBe(3)
    expect(await markRead(member!, group.id, 3)).toBe(3)
    expect(await markRead(member!, group.id, 0)).toBe(3)
    // Beyond lastSeq is clamped to it; no seq means lastSeq.
    expect(await markRead(member!, group.id, 1000)).toBe(group.lastSeq)
    expect(await readState(member!, group.id)).toMatchObject({
      unreadCount: 0,
      viewerMember: { lastReadSeq: group.lastSeq },
    })
    await sendText(owner!, group.id, 'later')
    expect(await markRead(member!, group.id)).toBe(group.lastSeq + 1)

    const conversationId = parseId(group.id, 'Conversation')
    const userId = parseId(member!.id, 'User')
    expect(await reads.stop()).toEqual([
      { type: 'read', conversationId, userId, lastReadSeq: 3, receiptsVisible: true },
      { type: 'read', conversationId, userId, lastReadSeq: group.lastSeq, receiptsVisible: true },
      { type: 'read', conversationId, userId, lastReadSeq: group.lastSeq + 1, receiptsVisible: true },
    ])
  })

  it('moves the sender read position with each message they send', async () => {
    const [alice, bob] = await newUsers(2)
    const { openPrivateConversation: chat } = await alice!.run(OpenPrivate, { userId: bob!.id })
    await sendText(bob!, chat.id, 'hi')
    await sendText(bob!, chat.id, 'there')
    expect(await readState(alice!, chat.id)).toMatchObject({ unreadCount: 2, viewerMember: { lastReadSeq: 0 } })
    const sent = await sendText(alice!, chat.id, 'reply')
    expect(await readState(alice!, chat.id)).toMatchObject({
      unreadCount: 0,
      viewerMember: { lastReadSeq: sent.message.seq },
    })
    expect(await readState(bob!, chat.id)).toMatchObject({ unreadCount: 1, viewerMember: { lastReadSeq: 2 } })
  })

  it('ends at the maximum of 20 concurrent calls with random seqs, publishing only real moves', async () => {
    const [owner, member] = await newUsers(2)
    const group = await groupWithTexts(owner!, member!, 30)
    const reads = await recordReads(member!)
    const seqs = Array.from({ length: 20 }, () => Math.floor(Math.random() * (group.lastSeq + 10)))
    // The largest goes first, so that a lost update by any later, smaller call would show.
    const top = seqs.indexOf(Math.max(...seqs))
    ;[seqs[0], seqs[top]] = [seqs[top]!, seqs[0]!]
    const answers = await Promise.all(seqs.map((seq) => markRead(member!, group.id, seq)))
    const expected = Math.min(Math.max(...seqs), group.lastSeq)

    expect((await readState(member!, group.id)).viewerMember.lastReadSeq).toBe(expected)
    // Every call answers with a position at least as far as it asked for (clamped) and never beyond the final one.
    answers.forEach((answer, i) => expect(answer).toBeGreaterThanOrEqual(Math.min(seqs[i]!, group.lastSeq)))
    expect(Math.max(...answers)).toBe(expected)
    // Each event is a distinct forward move: no duplicates, none backwards past the final position.
    const moves = (await reads.stop()).map((e) => e.lastReadSeq)
    expect(new Set(moves).size).toBe(moves.length)
    expect(Math.max(...moves)).toBe(expected)
    expect(moves.length).toBeLessThanOrEqual(20)
  })

  it('rejects bad input and non-members, storing nothing', async () => {
    const [owner, member, stranger] = await newUsers(3)
    const group = await groupWithTexts(owner!, member!, 2)
    await markRead(member!, group.id, 1)
    const reads = await recordReads(member!)

    expect(codes(await member!.try(MarkRead, { conversationId: group.id, seq: -1 }))).toEqual(['BAD_USER_INPUT'])
    expect(codes(await member!.try(MarkRead, { conversationId: 'not-an-id' }))).toEqual(['BAD_USER_INPUT'])
    expect(codes(await member!.try(MarkRead, { conversationId: member!.id }))).toEqual(['BAD_USER_INPUT'])
    expect(codes(await stranger!.try(MarkRead, { conversationId: group.id }))).toEqual(['NOT_FOUND'])
    expect(codes(await request(null, MarkRead, { conversationId: group.id }))).toEqual(['UNAUTHENTICATED'])
    expect(codes(await stranger!.try(ReadState, { id: group.id }))).toEqual(['NOT_FOUND'])

    await member!.run(LeaveConversation, { conversationId: group.id })
    expect(codes(await member!.try(MarkRead, { conversationId: group.id }))).toEqual(['NOT_FOUND'])
    expect(await reads.stop()).toEqual([])
    const rows = await testApp().db.$queryRaw<{ lastReadSeq: bigint }[]>`
      SELECT last_read_seq AS "lastReadSeq" FROM conversation_members
      WHERE conversation_id = ${parseId(group.id, 'Conversation')} AND user_id = ${parseId(member!.id, 'User')}`
    expect(rows.map((r) => Number(r.lastReadSeq))).toEqual([1])
  })

  it('keeps read positions in channels for the reader own counts, with receipts never visible', async () => {
    const operator = await newUser({ operator: true })
    const subscriber = await newUser()
    const { createChannel: channel } = await operator.run(CreateChannel, { title: 'news' })
    await subscriber.run(SubscribeChannel, { conversationId: channel.id })
    await sendText(operator, channel.id, 'one')
    await sendText(operator, channel.id, 'two')
    expect((await readState(subscriber, channel.id)).unreadCount).toBe(2)
    const reads = await recordReads(subscriber)
    const lastSeq = await lastSeqOf(subscriber, channel.id)
    expect(await markRead(subscriber, channel.id)).toBe(lastSeq)
    expect((await readState(subscriber, channel.id)).unreadCount).toBe(0)
    expect((await reads.stop()).map((e) => e.receiptsVisible)).toEqual([false])
  })
})

describe.sequential('read receipt switches', () => {
  it('marks the read event of a conversation type whose receipts are off as not visible to others', async () => {
    const settings = testApp().app.settings.readReceipts
    const saved = { ...settings }
    try {
      const [alice, bob] = await newUsers(2)
      const { openPrivateConversation: chat } = await alice!.run(OpenPrivate, { userId: bob!.id })
      const group = await createGroup(alice!, [bob!])
      const readBoth = async () => {
        await Promise.all([sendText(alice!, chat.id), sendText(alice!, group.id)])
        const reads = await recordReads(bob!)
        await markRead(bob!, chat.id)
        await markRead(bob!, group.id)
        return (await reads.stop()).map((e) => e.receiptsVisible)
      }
      settings.private = false
      expect(await readBoth()).toEqual([false, true])
      settings.private = true
      settings.group = false
      expect(await readBoth()).toEqual([true, false])
      // Positions moved all the same.
      expect((await readState(bob!, chat.id)).unreadCount).toBe(0)
      expect((await readState(bob!, group.id)).unreadCount).toBe(0)
    } finally {
      Object.assign(settings, saved)
    }
  })
})

describe('unread counts in the inbox', () => {
  it('costs the same statements for a page of 50 conversations as for a page of 5', async () => {
    const [viewer, other] = await newUsers(2)
    const groups = await Promise.all(
      Array.from({ length: 50 }, (_, i) => createGroup(other!, [viewer!], 'SHARED', `g${i}`)),
    )
    // Two unread texts in every fifth group, one of them mentioning the viewer.
    for (const group of groups.filter((_, i) => i % 5 === 0)) {
      await sendText(other!, group.id, 'a')
      await other!.run(SendMessage, {
        input: {
          conversationId: group.id,
          clientMessageId: 'mention',
          content: { text: { text: '@you' } },
          mentionUserIds: [viewer!.id],
        },
      })
    }
    const small = await countStatements(() => viewer!.run(InboxUnread, { first: 5 }))
    let page: ResultOf<typeof InboxUnread> | undefined
    const large = await countStatements(async () => (page = await viewer!.run(InboxUnread, { first: 50 })))
    expect(large).toBe(small)

    const nodes = page!.viewer.conversations.edges.map((e) => e.node)
    expect(nodes).toHaveLength(50)
    expect(page!.viewer.unreadTotal).toBe(20)
    expect(nodes.filter((n) => n.unreadCount > 0)).toHaveLength(10)
    expect(
      nodes.filter((n) => n.unreadCount > 0).every((n) => n.unreadCount === 2 && n.mentionedUnreadCount === 1),
    ).toBe(true)
  })
})
