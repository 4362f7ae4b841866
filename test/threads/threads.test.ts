import type { ResultOf } from '@graphql-typed-document-node/core'
import { describe, expect, it } from 'vitest'
import { messageGlobalId, parseId } from '../../src/domain/core/ids.ts'
import { codes, newUsers, type TestUser } from '../support/harness.ts'
import { Changes, EditMessage, RecallMessage } from '../support/lifecycle.ts'
import { Search } from '../support/search.ts'
import { AddMembers, createGroup, MarkRead, SendMessage } from '../support/operations.ts'
import { reply, SendReply, ThreadMainViews, ThreadOf } from '../support/threads.ts'

type Replies = NonNullable<NonNullable<ResultOf<typeof ThreadOf>['conversation']>['message']>['replies']

let sent = 0
async function post(user: TestUser, conversationId: string, opts: { mentions?: string[] } = {}) {
  const { sendMessage } = await user.run(SendMessage, {
    input: {
      conversationId,
      clientMessageId: `thread-top-${++sent}`,
      content: { text: { text: `top ${sent}` } },
      mentionUserIds: opts.mentions ?? [],
    },
  })
  return sendMessage.message
}

const summary = async (user: TestUser, conversationId: string, seq: number) =>
  (await user.run(ThreadOf, { id: conversationId, seq })).conversation!.message!

const mainViews = async (user: TestUser, conversationId: string, around = 1) => {
  const { conversation, viewer } = await user.run(ThreadMainViews, { id: conversationId, around })
  return {
    unread: conversation!.unreadCount,
    mentioned: conversation!.mentionedUnreadCount,
    last: conversation!.lastMessage?.seq,
    history: conversation!.messages.edges.map((e) => e.node.seq),
    around: conversation!.messagesAround.edges.map((e) => e.node.seq),
    total: viewer.unreadTotal,
  }
}

describe('replies', () => {
  it('are messages of the conversation with their own seq and pts, answered to the root', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    const root = await post(alice!, group.id)
    const first = await reply(bob!, group.id, root.id)
    expect(first.seq).toBe(root.seq + 1)
    expect(first.pts).toBe(root.pts + 1)
    expect(first.inConversation).toBe(false)
    expect(first.threadRoot).toEqual({ id: root.id, seq: root.seq })
    // A reply's id answers its root.
    const second = await reply(alice!, group.id, first.id, { also: true })
    expect(second.threadRoot!.seq).toBe(root.seq)
    expect(second.inConversation).toBe(true)
    // The change feed carries replies like any message.
    const changes = (await bob!.run(Changes, { id: group.id, sincePts: root.pts })).conversation!.changes
    expect(changes.messages.map((m) => m.seq)).toEqual([first.seq, second.seq])
  })

  it('are searched, edited and recalled like any message, and stay in their thread', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    const root = await post(alice!, group.id)
    const word = `zebrafish${Date.now()}`
    const r = await reply(bob!, group.id, root.id, { text: `answer ${word}` })
    const found = (await alice!.run(Search, { query: word })).searchMessages.edges.map((e) => e.node.id)
    expect(found).toEqual([r.id])
    await bob!.run(EditMessage, { messageId: r.id, text: 'edited answer' })
    await bob!.run(RecallMessage, { messageId: r.id })
    const seen = await summary(alice!, group.id, root.seq)
    expect(seen.replies.edges.map((e) => [e.node.seq, e.node.status, e.node.inConversation])).toEqual([
      [r.seq, 'RECALLED', false],
    ])
    // A recalled reply still counts among the replies (a tombstone), not among the unread ones.
    expect(seen.thread).toMatchObject({ replyCount: 1, viewerUnreadCount: 0 })
  })

  it('refuse a root of another conversation, one the viewer cannot see, or none', async () => {
    const [alice, bob, carol] = await newUsers(3)
    const group = await createGroup(alice!, [bob!])
    const other = await createGroup(carol!, [alice!])
    const foreign = await post(carol!, other.id)
    const input = (threadRootId: string) => ({
      input: {
        conversationId: group.id,
        clientMessageId: `bad-${threadRootId}`,
        content: { text: { text: 'x' } },
        threadRootId,
      },
    })
    expect(codes(await bob!.try(SendReply, input(foreign.id)))).toEqual(['NOT_FOUND'])
    // A message that does not exist in this conversation.
    const missing = messageGlobalId({ conversationId: parseId(group.id, 'Conversation'), seq: 10_000 })
    expect(codes(await alice!.try(SendReply, input(missing)))).toEqual(['NOT_FOUND'])
    // Directed to someone else: invisible to bob, so NOT_FOUND, and nothing is stored.
    const { sendMessage } = await alice!.run(SendMessage, {
      input: {
        conversationId: group.id,
        clientMessageId: 'directed-root',
        content: { text: { text: 'for me only' } },
        visibleToUserIds: [alice!.id],
      },
    })
    const before = (await mainViews(alice!, group.id)).history
    expect(codes(await bob!.try(SendReply, input(sendMessage.message.id)))).toEqual(['NOT_FOUND'])
    expect((await mainViews(alice!, group.id)).history).toEqual(before)
  })

  it('a recalled root still takes replies and shows its tombstone', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    const root = await post(alice!, group.id)
    await alice!.run(RecallMessage, { messageId: root.id })
    const r = await reply(bob!, group.id, root.id)
    expect(r.threadRoot!.seq).toBe(root.seq)
    const seen = await summary(bob!, group.id, root.seq)
    expect(seen.thread!.replyCount).toBe(1)
    expect(seen.replies.edges.map((e) => e.node.seq)).toEqual([r.seq])
  })
})

describe('where replies show', () => {
  it('history, messagesAround, lastMessage and unread counts leave out replies not sent alsoInConversation', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    await bob!.run(MarkRead, { conversationId: group.id })
    const root = await post(alice!, group.id)
    const hidden = await reply(alice!, group.id, root.id, { mentions: [bob!.id] })
    let views = await mainViews(bob!, group.id)
    expect(views.history).not.toContain(hidden.seq)
    expect(views.around).not.toContain(hidden.seq)
    expect(views.last).toBe(root.seq)
    expect(views).toMatchObject({ unread: 1, mentioned: 0 })
    const shown = await reply(alice!, group.id, root.id, { also: true, mentions: [bob!.id] })
    views = await mainViews(bob!, group.id)
    expect(views.history.slice(-2)).toEqual([root.seq, shown.seq])
    expect(views.around).toContain(shown.seq)
    expect(views.last).toBe(shown.seq)
    expect(views).toMatchObject({ unread: 2, mentioned: 1 })
    expect(views.total).toBeGreaterThanOrEqual(2)
    // A reply sent only to the thread does not move the sender's conversation read position past others' messages.
    const top = await post(bob!, group.id)
    await alice!.run(MarkRead, { conversationId: group.id, seq: top.seq - 1 })
    await reply(alice!, group.id, root.id)
    expect((await mainViews(alice!, group.id)).unread).toBe(1)
  })

  it('Message.replies pages a thread both ways in ascending seq with exact pageInfo', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    const root = await post(alice!, group.id)
    const seqs: number[] = []
    for (let i = 0; i < 7; i++) {
      seqs.push((await reply(i % 2 ? alice! : bob!, group.id, root.id, { also: i === 3 })).seq)
      await post(alice!, group.id) // top-level messages between replies are not replies
    }
    const forward: number[] = []
    let after: string | null = null
    for (;;) {
      const page: Replies = (await bob!.run(ThreadOf, { id: group.id, seq: root.seq, first: 3, after })).conversation!
        .message!.replies
      forward.push(...page.edges.map((e) => e.node.seq))
      expect(page.pageInfo.hasPreviousPage).toBe(after !== null)
      if (!page.pageInfo.hasNextPage) break
      after = page.pageInfo.endCursor
    }
    expect(forward).toEqual(seqs)
    const backward: number[] = []
    let before: string | null = null
    for (;;) {
      const page: Replies = (await bob!.run(ThreadOf, { id: group.id, seq: root.seq, last: 2, before })).conversation!
        .message!.replies
      backward.unshift(...page.edges.map((e) => e.node.seq))
      expect(page.pageInfo.hasNextPage).toBe(before !== null)
      if (!page.pageInfo.hasPreviousPage) break
      before = page.pageInfo.startCursor
    }
    expect(backward).toEqual(seqs)
    // A reply has no replies and no thread of its own.
    const ofReply = await summary(bob!, group.id, seqs[0]!)
    expect(ofReply.thread).toBeNull()
    expect(ofReply.replies.edges).toEqual([])
  })

  it('summaries count what the viewer may see: JOINED windows and directed replies', async () => {
    const [alice, bob, carol, dave] = await newUsers(4)
    const group = await createGroup(alice!, [bob!, carol!], 'JOINED')
    const root = await post(alice!, group.id)
    const early = await reply(bob!, group.id, root.id)
    const secret = await reply(bob!, group.id, root.id, { to: [alice!.id] })
    await alice!.run(AddMembers, { conversationId: group.id, userIds: [dave!.id] })
    // dave joined after the root and the replies: JOINED history shows him none of them.
    expect((await dave!.run(ThreadOf, { id: group.id, seq: root.seq })).conversation!.message).toBeNull()
    const daveRoot = await post(dave!, group.id)
    await reply(alice!, group.id, daveRoot.id)
    expect((await summary(dave!, group.id, daveRoot.seq)).thread!.replyCount).toBe(1)
    const late = await reply(carol!, group.id, root.id)
    const forCarol = await summary(carol!, group.id, root.seq)
    expect(forCarol.thread!.replyCount).toBe(2) // early and her own, not the directed one
    expect(forCarol.replies.edges.map((e) => e.node.seq)).toEqual([early.seq, late.seq])
    const forAlice = await summary(alice!, group.id, root.seq)
    expect(forAlice.thread!.replyCount).toBe(3)
    expect(forAlice.thread!.participants.map((p) => p.id)).toEqual([carol!.id, bob!.id])
    expect(forAlice.replies.edges.map((e) => e.node.seq)).toEqual([early.seq, secret.seq, late.seq])
    // Alice sent the root: she follows, and has read none of the replies.
    expect(forAlice.thread).toMatchObject({ viewerFollowing: true, viewerUnreadCount: 3, viewerLastReadSeq: 0 })
    // A root with no replies has no summary.
    const lonely = await post(alice!, group.id)
    expect((await summary(alice!, group.id, lonely.seq)).thread).toBeNull()
  })
})
