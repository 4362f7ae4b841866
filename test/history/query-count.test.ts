import { describe, expect, it } from 'vitest'
import { countStatements, newUser, newUsers, request, type TestUser } from '../support/harness.ts'
import { AddReaction, HistoryWithInteractions, PinMessage } from '../support/interactions.ts'
import { createGroup, OpenPrivate, SendMessage, sendText } from '../support/operations.ts'
import { Inbox } from '../support/readViews.ts'
import { InboxWithSettings, SaveDraft, UpdateSettings } from '../support/settings.ts'

/** The statements of a page of 5 and of a page of 50 (each after one warm-up run). */
async function pageCosts(run: (first: number) => Promise<number>): Promise<{ small: number; large: number }> {
  await run(5) // warms the token → user cache
  let rows = 0
  const small = await countStatements(async () => expect(await run(5)).toBe(5))
  await run(50)
  const large = await countStatements(async () => (rows = await run(50)))
  expect(rows).toBe(50)
  return { small, large }
}

describe('statement counts', () => {
  it('are the same for an inbox page of 50 as for a page of 5 (no statement per row)', async () => {
    const viewer = await newUser()
    const others = await newUsers(5)
    // Newest first: both pages hold every kind of row (private with a peer, groups with user and system messages).
    for (let i = 0; i < 45; i++) {
      if (i % 2) await createGroup(others[i % 5]!, [viewer])
      else await sendText(others[i % 5]!, (await createGroup(viewer, [others[i % 5]!])).id, `group ${i}`)
    }
    for (const other of others) {
      const chat = (await viewer.run(OpenPrivate, { userId: other.id })).openPrivateConversation
      await sendText(other, chat.id, 'private')
      await createGroup(other, [viewer])
    }

    const { small, large } = await pageCosts(async (first) => {
      const page = await viewer.run(Inbox, { first })
      expect(page.viewer.conversations.edges.every((e) => e.node.lastMessage !== null)).toBe(true)
      return page.viewer.conversations.edges.length
    })
    // One statement each for the page, the peers and the last messages, and at most two user batches
    // (the members' users at once, the senders when the last messages arrive; peers' rows prime the
    // user loader, so that second batch is sometimes empty). A statement per row would give 50+.
    const bound = 5
    expect(small).toBeLessThanOrEqual(bound)
    expect(large).toBeLessThanOrEqual(bound)
  })

  it('are the same for a history page of 100 messages with reactions and pinned messages as for a page of 5', async () => {
    const [owner, ...members] = await newUsers(4)
    const group = await createGroup(owner!, members)
    const sent = []
    for (let i = 0; i < 110; i++) sent.push((await sendText([owner!, ...members][i % 4]!, group.id, `m${i}`)).message)
    // Reactions from several users on most messages, and pins among them (pin notices are messages too).
    for (const [i, m] of sent.entries()) {
      if (i % 5 === 4) continue
      await members[i % 3]!.run(AddReaction, { messageId: m.id, emoji: i % 2 ? '👍' : '🎉' })
      if (i % 3 === 0) await owner!.run(AddReaction, { messageId: m.id, emoji: '❤️' })
    }
    for (const m of sent.filter((_, i) => i % 11 === 0)) await owner!.run(PinMessage, { messageId: m.id })
    // The newest messages (the page of 5) have reactions too, so both pages select the same things.
    for (let i = 0; i < 5; i++) {
      const m = (await sendText(members[i % 3]!, group.id, `late ${i}`)).message
      await owner!.run(AddReaction, { messageId: m.id, emoji: '👍' })
    }

    const page = async (last: number) => {
      await owner!.run(HistoryWithInteractions, { id: group.id, last }) // warms the token → user cache
      let reacted = 0
      const count = await countStatements(async () => {
        const result = (await owner!.run(HistoryWithInteractions, { id: group.id, last })).conversation!
        expect(result.messages.edges).toHaveLength(last)
        expect(result.pinnedMessages).toHaveLength(10)
        reacted = result.messages.edges.filter(
          (e) => e.node.reactions.length > 0 && e.node.reactions.every((g) => g.users.edges.length === g.count),
        ).length
      })
      return { count, reacted }
    }
    const small = await page(5)
    const large = await page(100)
    expect(small.reacted).toBe(5)
    expect(large.reacted).toBeGreaterThan(50)
    // The conversation, the page, the pins, a reactions batch for the page and one for the pins, one
    // reactors batch and at most two user batches (as they arrive): a statement per message would give 100+.
    const bound = 8
    expect(small.count).toBeLessThanOrEqual(bound)
    expect(large.count).toBeLessThanOrEqual(bound)
  })

  it('are one for a history page with its conversation, senders and quoted messages, in either direction, with or without a cursor', async () => {
    const [owner, member, outsider] = await newUsers(3)
    const group = await createGroup(owner!, [member!, outsider!])
    const hidden = (
      await owner!.run(SendMessage, {
        input: {
          conversationId: group.id,
          clientMessageId: 'directed',
          content: { text: { text: 'for the outsider' } },
          visibleToUserIds: [outsider!.id],
        },
      })
    ).sendMessage
    const shown = await sendText(member!, group.id, 'shown')
    for (let i = 0; i < 60; i++) {
      const quotedMessageId = i % 3 === 0 ? shown.message.id : i % 3 === 1 ? hidden.message.id : undefined
      // Only the owner (its sender) may quote the directed message.
      await (i % 3 === 1 ? owner! : [owner!, member!][i % 2]!).run(SendMessage, {
        input: {
          conversationId: group.id,
          clientMessageId: `q-${i}`,
          content: { text: { text: `m${i}` } },
          quotedMessageId,
        },
      })
    }
    const HISTORY = `query H($id: ID!, $first: Int, $after: String, $last: Int, $before: String) { conversation(id: $id) {
      messages(first: $first, after: $after, last: $last, before: $before) {
        edges { cursor node { seq sender { handle } content { ... on TextContent { text } } quoted { seq sender { handle } } } }
        pageInfo { hasPreviousPage hasNextPage startCursor } } } }`
    type Page = {
      edges: {
        cursor: string
        node: { seq: number; sender: { handle: string }; quoted: { seq: number; sender: { handle: string } } | null }
      }[]
      pageInfo: { hasPreviousPage: boolean; hasNextPage: boolean }
    }
    const page = async (variables: Record<string, unknown>) => {
      let messages: Page | undefined
      const count = await countStatements(async () => {
        const response = await request<{ conversation: { messages: Page } }, unknown>(member!.token, HISTORY, {
          id: group.id,
          ...variables,
        })
        expect(response.errors).toBeUndefined()
        messages = response.data!.conversation.messages
      })
      return { count, messages: messages! }
    }
    await page({ last: 5 }) // warms the token → user cache
    const newest = await page({ last: 50 })
    const older = await page({ last: 50, before: newest.messages.edges[0]!.cursor })
    const forward = await page({ first: 20, after: older.messages.edges[0]!.cursor })
    for (const { count, messages } of [newest, older, forward]) {
      expect(count).toBe(1)
      // The member sees the message quoted from them and not the one directed to the outsider.
      const quoting = messages.edges.filter((e) => e.node.seq > shown.message.seq)
      expect(quoting.every((e) => (e.node.quoted === null) === ((e.node.seq - shown.message.seq - 1) % 3 !== 0))).toBe(
        true,
      )
      expect(quoting.filter((e) => e.node.quoted).every((e) => e.node.quoted!.sender.handle === member!.handle)).toBe(
        true,
      )
    }
    const pageInfo = (p: { messages: Page }) => [p.messages.pageInfo.hasPreviousPage, p.messages.pageInfo.hasNextPage]
    expect([pageInfo(newest), pageInfo(older), pageInfo(forward)]).toEqual([
      [true, false],
      [false, true],
      [true, true],
    ])

    // The shape Relay and Apollo send: the page inside fragments on Conversation (and on Node), the
    // quoted message and the flag past the cursor only inside fragments of their own (a page reads
    // them only when something below it selects them, so missing one would cost a statement or a wrong flag).
    const FRAGMENTS = `query F($id: ID!, $before: String) { conversation(id: $id) { id ...Chat } }
      fragment Chat on Conversation { title ... on Node { ...Page } }
      fragment Page on Conversation { messages(last: 50, before: $before) { edges { node { seq sender { handle } ...Quote } } pageInfo { ...Flags } } }
      fragment Quote on Message { ... on Message { quoted { seq } } }
      fragment Flags on PageInfo { hasNextPage }`
    type Fragments = {
      conversation: {
        messages: {
          edges: { node: { seq: number; quoted: { seq: number } | null } }[]
          pageInfo: { hasNextPage: boolean }
        }
      }
    }
    const fromFragments = async (before: string | null) => {
      let data: Fragments | undefined
      const count = await countStatements(async () => {
        data = (await request<Fragments, unknown>(member!.token, FRAGMENTS, { id: group.id, before })).data ?? undefined
      })
      expect(count).toBe(1)
      return data!.conversation.messages
    }
    const seqsAndQuotes = (edges: { node: { seq: number; quoted: { seq: number } | null } }[]) =>
      edges.map((e) => [e.node.seq, e.node.quoted?.seq ?? null])
    const newestByFragments = await fromFragments(null)
    expect(seqsAndQuotes(newestByFragments.edges)).toEqual(seqsAndQuotes(newest.messages.edges))
    expect(newestByFragments.pageInfo.hasNextPage).toBe(false)
    const olderByFragments = await fromFragments(newest.messages.edges[0]!.cursor)
    expect(seqsAndQuotes(olderByFragments.edges)).toEqual(seqsAndQuotes(older.messages.edges))
    expect(olderByFragments.pageInfo.hasNextPage).toBe(true)
  })

  it('stay the same for a page of 50 with settings, drafts (quotes, mentions) and the total selected', async () => {
    const viewer = await newUser()
    const others = await newUsers(3)
    const drafted = async (user: TestUser, id: string, i: number) => {
      const quoted = await sendText(others[i % 3]!, id, `quote ${i}`)
      await user.run(SaveDraft, {
        id,
        draft: { text: `draft ${i}`, quotedMessageId: quoted.message.id, mentionUserIds: [others[i % 3]!.id] },
      })
    }
    for (let i = 0; i < 52; i++) {
      const group = await createGroup(others[i % 3]!, [viewer])
      if (i % 4) await drafted(viewer, group.id, i)
      if (i % 5 === 0)
        await viewer.run(UpdateSettings, {
          id: group.id,
          input: { pinned: i < 20, doNotDisturbUntil: '9999-01-01T00:00:00Z', markedUnread: true },
        })
    }
    const { small, large } = await pageCosts(async (first) => {
      const page = await viewer.run(InboxWithSettings, { first })
      const drafts = page.viewer.conversations.edges.filter((e) => e.node.viewerSettings.draft)
      expect(
        drafts.every(
          (e) => e.node.viewerSettings.draft!.quotedMessage && e.node.viewerSettings.draft!.mentions.length === 1,
        ),
      ).toBe(true)
      return page.viewer.conversations.edges.length
    })
    // One statement each for the page, the total, the unread counts, the last messages, the settings,
    // the quoted messages and the mentioned users (7 here), and room for a second user batch.
    expect(small).toBeLessThanOrEqual(8)
    expect(large).toBeLessThanOrEqual(8)
  })
})
