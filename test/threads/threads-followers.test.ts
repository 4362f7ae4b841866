import type { ResultOf } from '@graphql-typed-document-node/core'
import { describe, expect, it } from 'vitest'
import { codes, newUsers, type TestUser } from '../support/harness.ts'
import { createGroup, SendMessage } from '../support/operations.ts'
import { FollowThread, MarkThreadRead, reply, ThreadOf, ViewerThreads } from '../support/threads.ts'

type Threads = ResultOf<typeof ViewerThreads>['viewer']['threads']

let sent = 0
async function post(user: TestUser, conversationId: string) {
  const { sendMessage } = await user.run(SendMessage, {
    input: { conversationId, clientMessageId: `thread-follow-${++sent}`, content: { text: { text: `top ${sent}` } } },
  })
  return sendMessage.message
}

const summary = async (user: TestUser, conversationId: string, seq: number) =>
  (await user.run(ThreadOf, { id: conversationId, seq })).conversation!.message!

describe('followers and thread reads', () => {
  it('the root sender, repliers and the mentioned follow; followThread(false) stops it, a reply follows again', async () => {
    const [alice, bob, carol, dave] = await newUsers(4)
    const group = await createGroup(alice!, [bob!, carol!, dave!])
    const root = await post(alice!, group.id)
    await reply(bob!, group.id, root.id, { mentions: [carol!.id] })
    const following = async (u: TestUser) => (await summary(u, group.id, root.seq)).thread!.viewerFollowing
    expect(await Promise.all([alice!, bob!, carol!, dave!].map(following))).toEqual([true, true, true, false])
    await dave!.run(FollowThread, { messageId: root.id, follow: true })
    await carol!.run(FollowThread, { messageId: root.id, follow: false })
    await reply(bob!, group.id, root.id, { mentions: [carol!.id] })
    expect(await Promise.all([alice!, bob!, carol!, dave!].map(following))).toEqual([true, true, false, true])
    await carol!.run(FollowThread, { messageId: root.id, follow: false })
    await reply(carol!, group.id, root.id)
    expect(await following(carol!)).toBe(true)
  })

  it('markThreadRead moves the position to the latest reply by default and never backwards', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    const root = await post(alice!, group.id)
    const replies = [await reply(bob!, group.id, root.id), await reply(bob!, group.id, root.id)]
    await reply(bob!, group.id, root.id)
    expect((await summary(alice!, group.id, root.seq)).thread!.viewerUnreadCount).toBe(3)
    const marked = await alice!.run(MarkThreadRead, { messageId: root.id, seq: replies[1]!.seq })
    expect(marked.markThreadRead.thread).toMatchObject({ viewerUnreadCount: 1, viewerLastReadSeq: replies[1]!.seq })
    const back = await alice!.run(MarkThreadRead, { messageId: root.id, seq: replies[0]!.seq })
    expect(back.markThreadRead.thread!.viewerLastReadSeq).toBe(replies[1]!.seq)
    const all = await alice!.run(MarkThreadRead, { messageId: root.id })
    expect(all.markThreadRead.thread!.viewerUnreadCount).toBe(0)
    // Not following: no unread count, but the position is kept.
    const unfollowed = await alice!.run(FollowThread, { messageId: root.id, follow: false })
    await reply(bob!, group.id, root.id)
    expect(unfollowed.followThread.thread!.viewerFollowing).toBe(false)
    expect((await summary(alice!, group.id, root.seq)).thread!.viewerUnreadCount).toBe(0)
  })

  it('Viewer.threads lists followed threads, latest reply first, with unreadOnly', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    const roots = [await post(alice!, group.id), await post(alice!, group.id), await post(alice!, group.id)]
    await reply(bob!, group.id, roots[1]!.id)
    await reply(bob!, group.id, roots[0]!.id)
    await reply(bob!, group.id, roots[2]!.id)
    await post(alice!, group.id) // no replies: not listed
    const listed: number[] = []
    let after: string | null = null
    for (;;) {
      const page: Threads = (await alice!.run(ViewerThreads, { first: 2, after })).viewer.threads
      listed.push(...page.edges.map((e) => e.node.seq))
      if (!page.pageInfo.hasNextPage) break
      after = page.pageInfo.endCursor
    }
    expect(listed).toEqual([roots[2]!.seq, roots[0]!.seq, roots[1]!.seq])
    await alice!.run(MarkThreadRead, { messageId: roots[0]!.id })
    const unread = (await alice!.run(ViewerThreads, { unreadOnly: true })).viewer.threads.edges.map((e) => e.node.seq)
    expect(unread).toEqual([roots[2]!.seq, roots[1]!.seq])
    await alice!.run(FollowThread, { messageId: roots[2]!.id, follow: false })
    const after2 = (await alice!.run(ViewerThreads, {})).viewer.threads.edges.map((e) => e.node.seq)
    expect(after2).toEqual([roots[0]!.seq, roots[1]!.seq])
  })

  it('answers NOT_FOUND for a message the viewer cannot see', async () => {
    const [alice, bob, carol] = await newUsers(3)
    const group = await createGroup(alice!, [bob!])
    const root = await post(alice!, group.id)
    expect(codes(await carol!.try(FollowThread, { messageId: root.id, follow: true }))).toEqual(['NOT_FOUND'])
    expect(codes(await carol!.try(MarkThreadRead, { messageId: root.id }))).toEqual(['NOT_FOUND'])
  })
})
