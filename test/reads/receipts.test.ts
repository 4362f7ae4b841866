import type { ResultOf } from '@graphql-typed-document-node/core'
import { describe, expect, it } from 'vitest'
import { parseId } from '../../src/domain/core/ids.ts'
import { codes, countStatements, newUser, newUsers, testApp, type TestUser } from '../support/harness.ts'
import {
  AddMembers,
  CreateChannel,
  createGroup,
  MarkRead,
  OpenPrivate,
  RemoveMember,
  SendMessage,
  sendText,
  SubscribeChannel,
} from '../support/operations.ts'
import { ReceiptReaders, Receipts, ReceiptsUnreadCount } from '../support/readViews.ts'

type Receipt = NonNullable<ResultOf<typeof Receipts>['conversation']>['messages']['edges'][number]['node']['receipt']

/** seq → receipt, as `user` sees the newest messages of a conversation. */
async function receipts(user: TestUser, id: string): Promise<Map<number, Receipt>> {
  const { conversation } = await user.run(Receipts, { id, last: 100 })
  return new Map(conversation!.messages.edges.map((e) => [e.node.seq, e.node.receipt]))
}

/** Every reader (or non-reader) of one message, following the pages. */
async function readers(user: TestUser, id: string, seq: number, read?: boolean, first = 100): Promise<string[]> {
  const ids: string[] = []
  let after: string | null | undefined
  do {
    const page = (await user.run(ReceiptReaders, { id, seq, read, first, after })).conversation!.message!.receipt!
      .readers
    ids.push(...page.edges.map((e) => e.node.id))
    after = page.pageInfo.hasNextPage ? page.pageInfo.endCursor : null
  } while (after)
  return ids
}

const markRead = (user: TestUser, conversationId: string, seq?: number) => user.run(MarkRead, { conversationId, seq })
/** User ids in the order readers lists them: ascending numeric id. */
const sorted = (users: TestUser[]) => users.map((u) => u.id).sort((a, b) => parseId(a, 'User') - parseId(b, 'User'))

async function privateChat() {
  const [alice, bob] = await newUsers(2)
  const { openPrivateConversation: chat } = await alice!.run(OpenPrivate, { userId: bob!.id })
  return { alice: alice!, bob: bob!, id: chat.id }
}

describe('read receipts', () => {
  it('private: readByPeer on the sender own messages only', async () => {
    const { alice, bob, id } = await privateChat()
    const a1 = (await sendText(alice, id, 'one')).message.seq
    const a2 = (await sendText(alice, id, 'two')).message.seq
    const unread = { readByPeer: false, readCount: 0, unreadCount: 1 }
    expect(await receipts(alice, id)).toEqual(
      new Map([
        [a1, unread],
        [a2, unread],
      ]),
    )
    expect(await readers(alice, id, a1, false)).toEqual([bob.id])
    expect(await readers(alice, id, a1)).toEqual([])
    // Nobody sees a receipt on someone else's message.
    expect([...(await receipts(bob, id)).values()]).toEqual([null, null])

    await markRead(bob, id, a1)
    expect(await receipts(alice, id)).toEqual(
      new Map([
        [a1, { readByPeer: true, readCount: 1, unreadCount: 0 }],
        [a2, unread],
      ]),
    )
    expect(await readers(alice, id, a1)).toEqual([bob.id])
    // Bob's reply is after alice's position (her own sends moved it to a2).
    const b1 = (await sendText(bob, id, 'reply')).message.seq
    expect((await receipts(bob, id)).get(b1)).toEqual({ readByPeer: false, readCount: 0, unreadCount: 1 })
  })

  it('group: counts current members who could see the message (JOINED late joiners, directed audience)', async () => {
    const [owner, m1, m2, late] = await newUsers(4)
    const group = await createGroup(owner!, [m1!, m2!], 'JOINED')
    const g1 = (await sendText(owner!, group.id, 'before late joined')).message.seq
    await owner!.run(AddMembers, { conversationId: group.id, userIds: [late!.id] })
    const directed = await owner!.run(SendMessage, {
      input: {
        conversationId: group.id,
        clientMessageId: 'directed',
        content: { text: { text: 'for m1' } },
        visibleToUserIds: [m1!.id],
      },
    })
    const g2 = directed.sendMessage.message.seq
    const g3 = (await sendText(owner!, group.id, 'for all')).message.seq
    await markRead(m1!, group.id)
    await markRead(late!, group.id)
    await markRead(m2!, group.id, g1)

    const seen = await receipts(owner!, group.id)
    expect(seen.get(group.lastSeq)).toBeNull() // CONVERSATION_CREATED is nobody's own message
    expect(seen.get(g1)).toEqual({ readByPeer: null, readCount: 2, unreadCount: 0 })
    expect(seen.get(g2)).toEqual({ readByPeer: null, readCount: 1, unreadCount: 0 })
    expect(seen.get(g3)).toEqual({ readByPeer: null, readCount: 2, unreadCount: 1 })
    expect(await readers(owner!, group.id, g1)).toEqual(sorted([m1!, m2!]))
    expect(await readers(owner!, group.id, g2)).toEqual([m1!.id])
    expect(await readers(owner!, group.id, g3)).toEqual(sorted([m1!, late!]))
    expect(await readers(owner!, group.id, g3, false)).toEqual([m2!.id])
    expect([...(await receipts(m1!, group.id)).values()].every((r) => r === null)).toBe(true)

    // A removed member no longer counts either way.
    await owner!.run(RemoveMember, { conversationId: group.id, userId: m2!.id })
    const after = await receipts(owner!, group.id)
    expect(after.get(g1)).toEqual({ readByPeer: null, readCount: 1, unreadCount: 0 })
    expect(after.get(g3)).toEqual({ readByPeer: null, readCount: 2, unreadCount: 0 })
  })

  it('pages readers by user, and rejects bad paging arguments', async () => {
    const [owner, ...members] = await newUsers(6)
    const group = await createGroup(owner!, members)
    const seq = (await sendText(owner!, group.id)).message.seq
    await Promise.all(members.map((m) => markRead(m, group.id)))
    expect(await readers(owner!, group.id, seq, true, 2)).toEqual(sorted(members))
    expect(await readers(owner!, group.id, seq, false, 2)).toEqual([])

    const first = (await owner!.run(ReceiptReaders, { id: group.id, seq, first: 2 })).conversation!.message!.receipt!
      .readers
    expect(first.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false })
    const next = (await owner!.run(ReceiptReaders, { id: group.id, seq, first: 2, after: first.pageInfo.endCursor }))
      .conversation!.message!.receipt!.readers
    expect(next.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: true })
    expect(codes(await owner!.try(ReceiptReaders, { id: group.id, seq, after: 'bogus' }))).toEqual(['BAD_USER_INPUT'])
    expect(codes(await owner!.try(ReceiptReaders, { id: group.id, seq, first: 101 }))).toEqual(['BAD_USER_INPUT'])
  })

  it('channel: no receipts, while subscribers still get unread counts from their read positions', async () => {
    const operator = await newUser({ operator: true })
    const subscriber = await newUser()
    const { createChannel: channel } = await operator.run(CreateChannel, { title: 'announcements' })
    await subscriber.run(SubscribeChannel, { conversationId: channel.id })
    await sendText(operator, channel.id, 'news')
    await markRead(subscriber, channel.id)
    expect([...(await receipts(operator, channel.id)).values()].every((r) => r === null)).toBe(true)
    expect((await subscriber.run(ReceiptsUnreadCount, { id: channel.id })).conversation!.unreadCount).toBe(0)
  })

  it('costs the same statements for receipts on a page of 50 own messages as on 5', async () => {
    const [owner, ...members] = await newUsers(4)
    const group = await createGroup(owner!, members)
    for (let i = 0; i < 50; i++) await sendText(owner!, group.id, `m${i}`)
    await markRead(members[0]!, group.id, group.lastSeq + 25)
    const small = await countStatements(() => owner!.run(Receipts, { id: group.id, last: 5 }))
    let page: Map<number, Receipt> | undefined
    const large = await countStatements(async () => (page = await receipts(owner!, group.id)))
    expect(large).toBe(small)
    expect(page!.get(group.lastSeq + 25)).toEqual({ readByPeer: null, readCount: 1, unreadCount: 2 })
    expect(page!.get(group.lastSeq + 26)).toEqual({ readByPeer: null, readCount: 0, unreadCount: 3 })
  })
})

describe.sequential('read receipt switches', () => {
  it('hides receipts per conversation type when switched off, keeping read positions and unread counts', async () => {
    const settings = testApp().app.settings.readReceipts
    const saved = { ...settings }
    try {
      const chat = await privateChat()
      const [owner, member] = await newUsers(2)
      const group = await createGroup(owner!, [member!])
      const p1 = (await sendText(chat.alice, chat.id)).message.seq
      const g1 = (await sendText(owner!, group.id)).message.seq

      settings.private = false
      expect((await receipts(chat.alice, chat.id)).get(p1)).toBeNull()
      expect((await receipts(owner!, group.id)).get(g1)).toMatchObject({ readCount: 0, unreadCount: 1 })
      await markRead(chat.bob, chat.id)
      expect((await chat.bob.run(ReceiptsUnreadCount, { id: chat.id })).conversation!.unreadCount).toBe(0)

      settings.private = true
      settings.group = false
      expect((await receipts(owner!, group.id)).get(g1)).toBeNull()
      // The read made while private receipts were off was stored all the same.
      expect((await receipts(chat.alice, chat.id)).get(p1)).toEqual({ readByPeer: true, readCount: 1, unreadCount: 0 })
      await markRead(member!, group.id)
      expect((await member!.run(ReceiptsUnreadCount, { id: group.id })).conversation!.unreadCount).toBe(0)

      settings.group = true
      expect((await receipts(owner!, group.id)).get(g1)).toEqual({ readByPeer: null, readCount: 1, unreadCount: 0 })
    } finally {
      Object.assign(settings, saved)
    }
  })
})
