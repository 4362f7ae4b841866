import { describe, expect, it } from 'vitest'
import { codes, newUsers, testApp, type TestUser } from '../support/harness.ts'
import { AddReaction, ReactionState, RemoveReaction } from '../support/interactions.ts'
import { messageGlobalId } from '../../src/domain/core/ids.ts'
import { Changes, conversationKey, RecallMessage } from '../support/lifecycle.ts'
import { buildVisibilityMatrix } from '../support/visibility.ts'
import { ConversationEvents, InboxEvents } from '../support/live.ts'
import { createGroup, SendMessage, sendText } from '../support/operations.ts'
import { liveServer, subscribeWs, waitForSubscriptions, type Received } from '../support/server.ts'

const instance = liveServer()

const state = async (user: TestUser, conversationId: string, seq: number) =>
  (await user.run(ReactionState, { id: conversationId, seq })).conversation!
const groups = async (user: TestUser, conversationId: string, seq: number) =>
  (await state(user, conversationId, seq)).message!.reactions.map((g) => [g.emoji, g.count, g.viewerReacted])

describe('addReaction / removeReaction', () => {
  it('groups by emoji in order of first reaction, marks the viewer, takes a pts per change and none for a repeat', async () => {
    const [alice, bob, carol] = await newUsers(3)
    const group = await createGroup(alice!, [bob!, carol!])
    const m = (await sendText(alice!, group.id, 'react to me')).message

    const first = (await bob!.run(AddReaction, { messageId: m.id, emoji: '👍' })).addReaction
    expect(first.pts).toBe(m.pts + 1)
    await carol!.run(AddReaction, { messageId: m.id, emoji: '🎉' })
    await carol!.run(AddReaction, { messageId: m.id, emoji: '👍' })
    // The text form of a pictograph is the same reaction as its emoji form.
    await alice!.run(AddReaction, { messageId: m.id, emoji: '❤' })
    const repeat = (await alice!.run(AddReaction, { messageId: m.id, emoji: '❤️' })).addReaction
    expect(repeat.pts).toBe(m.pts + 4)
    expect(await groups(carol!, group.id, m.seq)).toEqual([
      ['👍', 2, true],
      ['🎉', 1, true],
      ['❤️', 1, false],
    ])
    expect(await groups(bob!, group.id, m.seq)).toEqual([
      ['👍', 2, true],
      ['🎉', 1, false],
      ['❤️', 1, false],
    ])
    const users = (await carol!.run(ReactionState, { id: group.id, seq: m.seq, first: 1 })).conversation!.message!
      .reactions[0]!.users
    expect(users.edges.map((e) => e.node.id)).toEqual([bob!.id])
    const next = (
      await carol!.run(ReactionState, { id: group.id, seq: m.seq, first: 5, after: users.pageInfo.endCursor })
    ).conversation!.message!.reactions[0]!.users
    expect(next.edges.map((e) => e.node.id)).toEqual([carol!.id])

    // Removing the first reactor keeps the group, now counted from its earliest remaining reaction; the last one removes it.
    const removed = (await bob!.run(RemoveReaction, { messageId: m.id, emoji: '👍' })).removeReaction
    expect(removed.pts).toBe(m.pts + 5)
    expect((await bob!.run(RemoveReaction, { messageId: m.id, emoji: '👍' })).removeReaction.pts).toBe(m.pts + 5)
    await carol!.run(RemoveReaction, { messageId: m.id, emoji: '🎉' })
    expect(await groups(alice!, group.id, m.seq)).toEqual([
      ['👍', 1, false],
      ['❤️', 1, true],
    ])
    const after = await state(alice!, group.id, m.seq)
    expect(after.lastPts).toBe(m.pts + 6)
    expect(after.lastSeq).toBe(m.seq)
  })

  it('takes one emoji grapheme or a :shortcode:, and refuses anything else with BAD_USER_INPUT and nothing stored', async () => {
    const [alice] = await newUsers(1)
    const group = await createGroup(alice!, [])
    const m = (await sendText(alice!, group.id, 'emoji')).message
    for (const emoji of ['👨‍👩‍👧', '🇨🇳', '👍🏽', '1️⃣', ':party_parrot:', ':+1:']) {
      expect(codes(await alice!.try(AddReaction, { messageId: m.id, emoji })), emoji).toEqual([])
      await alice!.run(RemoveReaction, { messageId: m.id, emoji })
    }
    const before = await state(alice!, group.id, m.seq)
    for (const emoji of ['', 'a', '👍👍', '👍 ', '::', ':Party:', `:${'a'.repeat(33)}:`, 'party', '©x', '\u0301']) {
      expect(codes(await alice!.try(AddReaction, { messageId: m.id, emoji })), emoji).toEqual(['BAD_USER_INPUT'])
      expect(codes(await alice!.try(RemoveReaction, { messageId: m.id, emoji })), emoji).toEqual(['BAD_USER_INPUT'])
    }
    expect(await state(alice!, group.id, m.seq)).toEqual(before)
  })

  it('stops at 3 emoji a user and 20 a message with LIMIT_REACHED, configurable, with nothing stored', async () => {
    const users = await newUsers(8)
    const group = await createGroup(users[0]!, users.slice(1))
    const m = (await sendText(users[0]!, group.id, 'limits')).message
    const emoji = [
      '😀',
      '😁',
      '😂',
      '🤣',
      '😃',
      '😄',
      '😅',
      '😆',
      '😉',
      '😊',
      '😋',
      '😎',
      '😍',
      '😘',
      '🥰',
      '😗',
      '😙',
      '🥲',
      '😚',
      '🙂',
      '🤗',
    ]
    for (const [i, e] of emoji.slice(0, 20).entries())
      await users[Math.floor(i / 3)]!.run(AddReaction, { messageId: m.id, emoji: e })
    const full = await state(users[0]!, group.id, m.seq)
    expect(full.message!.reactions).toHaveLength(20)
    expect(codes(await users[0]!.try(AddReaction, { messageId: m.id, emoji: '🙃' }))).toEqual(['LIMIT_REACHED']) // a 4th for user 0
    expect(codes(await users[7]!.try(AddReaction, { messageId: m.id, emoji: emoji[20]! }))).toEqual(['LIMIT_REACHED']) // a 21st emoji
    expect(await state(users[0]!, group.id, m.seq)).toEqual(full)
    // An emoji already there is no new one: user 7 can still join it.
    expect(
      (await users[7]!.run(AddReaction, { messageId: m.id, emoji: emoji[0]! })).addReaction.reactions[0],
    ).toMatchObject({ count: 2, viewerReacted: true })

    const settings = testApp().app.settings
    const saved = settings.reactionLimits
    settings.reactionLimits = { emojiPerMessage: 20, perUser: 1 }
    try {
      expect(codes(await users[7]!.try(AddReaction, { messageId: m.id, emoji: emoji[1]! }))).toEqual(['LIMIT_REACHED'])
    } finally {
      settings.reactionLimits = saved
    }
  })

  it('is for members who can see the message: NOT_FOUND otherwise; a recalled message has none and takes none', async () => {
    const [alice, bob, carol, outsider] = await newUsers(4)
    const group = await createGroup(alice!, [bob!, carol!])
    const directed = (
      await alice!.run(SendMessage, {
        input: {
          conversationId: group.id,
          clientMessageId: `dir-${Math.random()}`,
          content: { text: { text: 'for bob' } },
          visibleToUserIds: [bob!.id],
        },
      })
    ).sendMessage.message
    const before = await state(alice!, group.id, directed.seq)
    expect(codes(await carol!.try(AddReaction, { messageId: directed.id, emoji: '👍' }))).toEqual(['NOT_FOUND'])
    expect(codes(await outsider!.try(AddReaction, { messageId: directed.id, emoji: '👍' }))).toEqual(['NOT_FOUND'])
    expect(codes(await outsider!.try(RemoveReaction, { messageId: directed.id, emoji: '👍' }))).toEqual(['NOT_FOUND'])
    expect(await state(alice!, group.id, directed.seq)).toEqual(before)

    await bob!.run(AddReaction, { messageId: directed.id, emoji: '👍' })
    await alice!.run(RecallMessage, { messageId: directed.id })
    const recalled = await state(bob!, group.id, directed.seq)
    expect(recalled.message!.reactions).toEqual([])
    expect(codes(await bob!.try(AddReaction, { messageId: directed.id, emoji: '🎉' }))).toEqual(['MESSAGE_RECALLED'])
    expect(codes(await bob!.try(RemoveReaction, { messageId: directed.id, emoji: '👍' }))).toEqual(['MESSAGE_RECALLED'])
    expect(await state(bob!, group.id, directed.seq)).toEqual(recalled)
  })

  it('follows the visibility fixture: a member reacts to exactly the messages they may see', async () => {
    const m = await buildVisibilityMatrix()
    for (const viewer of [m.alice, m.bob, m.carol]) {
      const allowed: number[] = []
      for (let seq = 1; seq <= m.lastSeq; seq++) {
        const id = messageGlobalId({ conversationId: conversationKey(m.group.id), seq })
        const response = await viewer.try(AddReaction, { messageId: id, emoji: '👀' })
        if (!codes(response).length) allowed.push(seq)
        else expect(codes(response)).toEqual(['NOT_FOUND'])
      }
      expect(allowed).toEqual(m.visible.get(viewer))
    }
  })

  it('keeps a model of 20 members adding and removing the same two reactions at once, with unique, gap-free pts', async () => {
    const members = await newUsers(20)
    const group = await createGroup(members[0]!, members.slice(1))
    const m = (await sendText(members[0]!, group.id, 'race')).message
    const ops = members.map((_, i) =>
      Array.from({ length: 4 }, (_, j) => ({ add: (i + j) % 3 !== 2, emoji: (i * 7 + j) % 2 ? '👍' : '🎉' })),
    )
    // The model: each member's own operations in order (they are sequential per member); a change is one that alters its set.
    const model = new Map<string, Set<string>>()
    let changes = 0
    for (const [i, list] of ops.entries()) {
      const mine = new Set<string>()
      for (const op of list) {
        if (op.add !== mine.has(op.emoji)) changes++
        if (op.add) mine.add(op.emoji)
        else mine.delete(op.emoji)
      }
      model.set(members[i]!.id, mine)
    }
    const seenPts = new Set<number>()
    await Promise.all(
      members.map(async (member, i) => {
        let last: number | null = null
        for (const op of ops[i]!) {
          const result = op.add
            ? (await member.run(AddReaction, { messageId: m.id, emoji: op.emoji })).addReaction
            : (await member.run(RemoveReaction, { messageId: m.id, emoji: op.emoji })).removeReaction
          if (result.pts !== last && result.pts !== m.pts) seenPts.add(result.pts)
          last = result.pts
        }
      }),
    )
    const final = await state(members[0]!, group.id, m.seq)
    expect(final.lastPts).toBe(m.pts + changes)
    const count = (emoji: string) => [...model.values()].filter((s) => s.has(emoji)).length
    const expected = ['👍', '🎉'].filter((e) => count(e) > 0).map((e) => [e, count(e)])
    expect(final.message!.reactions.map((g) => [g.emoji, g.count]).sort()).toEqual(expected.sort())
    for (const member of members.slice(0, 5)) {
      const mine = (await state(member, group.id, m.seq))
        .message!.reactions.filter((g) => g.viewerReacted)
        .map((g) => g.emoji)
        .sort()
      expect(mine).toEqual([...model.get(member.id)!].sort())
    }
    // Every reported pts belongs to a different change, and together they are every pts taken.
    expect(seenPts.size).toBe(changes)
    expect([...seenPts].sort((a, b) => a - b)).toEqual(Array.from({ length: changes }, (_, i) => m.pts + 1 + i))
  })

  it('serves a message with 10,000 reactions from its aggregate, in the same statements as one with a single reaction', async () => {
    const [alice] = await newUsers(1)
    const group = await createGroup(alice!, [])
    const crowded = (await sendText(alice!, group.id, 'popular')).message
    const quiet = (await sendText(alice!, group.id, 'quiet')).message
    await alice!.run(AddReaction, { messageId: quiet.id, emoji: '👍' })
    // 10,000 reactors, written as the action would leave them (rows and aggregate), in one statement.
    await testApp().db.$executeRawUnsafe(
      `
      WITH u AS (INSERT INTO users (handle, display_name) SELECT 'bulk-' || $1 || '-' || g, 'Bulk ' || g FROM generate_series(1, 10000) g RETURNING id),
      r AS (INSERT INTO message_reactions (conversation_id, seq, emoji, user_id, reacted_at) SELECT $2, $3, '👍', id, now() FROM u)
      INSERT INTO message_reaction_groups (conversation_id, seq, emoji, count, first_reacted_at) VALUES ($2, $3, '👍', 10000, now())`,
      String(Math.random()).slice(2),
      BigInt(conversationKey(group.id)),
      BigInt(crowded.seq),
    )
    const crowdedState = await state(alice!, group.id, crowded.seq)
    expect(crowdedState.message!.reactions[0]).toMatchObject({
      emoji: '👍',
      count: 10_000,
      viewerReacted: false,
      users: { pageInfo: { hasNextPage: true } },
    })
    const added = (await alice!.run(AddReaction, { messageId: crowded.id, emoji: '👍' })).addReaction
    expect(added.reactions[0]).toMatchObject({ count: 10_001, viewerReacted: true })
  })
})

describe('REACTIONS_CHANGED events', () => {
  type Events = Received<{
    conversationEvents: { __typename: string; kind?: string; pts?: number; message?: { id: string } }
  }>
  const follow = (user: TestUser, conversationId: string, sincePts?: number) =>
    subscribeWs(instance.connect(user.token), ConversationEvents, { conversationId, sincePts }) as Events
  const kinds = (stream: Events) =>
    stream.events
      .map((e) => e.conversationEvents)
      .filter((e) => e.__typename === 'MessageEvent')
      .map((e) => [e.kind, e.message!.id, e.pts])

  it('reach conversation and inbox streams live, and a resume with sincePts replays each change once; Conversation.changes lists them', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    const a = (await sendText(alice!, group.id, 'a')).message
    const b = (await sendText(alice!, group.id, 'b')).message
    const live = follow(bob!, group.id)
    const inbox = subscribeWs(instance.connect(bob!.token), InboxEvents, {}) as Received<{
      inboxEvents: { __typename: string; kind?: string; pts?: number }
    }>
    await waitForSubscriptions(testApp().app, bob!, 2)
    const reacted = (await alice!.run(AddReaction, { messageId: a.id, emoji: '👍' })).addReaction
    await live.waitFor(1)
    await inbox.waitFor(1)
    expect(kinds(live)).toEqual([['REACTIONS_CHANGED', a.id, reacted.pts]])
    expect(inbox.events.map((e) => [e.inboxEvents.kind, e.inboxEvents.pts])).toEqual([
      ['REACTIONS_CHANGED', reacted.pts],
    ])
    live.dispose()
    inbox.dispose()

    // Away: reactions on both messages, and a second change of the first.
    await bob!.run(AddReaction, { messageId: b.id, emoji: '🎉' })
    await alice!.run(RemoveReaction, { messageId: a.id, emoji: '👍' })
    const resumed = follow(bob!, group.id, reacted.pts)
    await resumed.waitFor(2)
    const last = (await alice!.run(AddReaction, { messageId: b.id, emoji: '🎉' })).addReaction
    await resumed.waitFor(3)
    expect(kinds(resumed)).toEqual([
      ['REACTIONS_CHANGED', b.id, reacted.pts + 1],
      ['REACTIONS_CHANGED', a.id, reacted.pts + 2],
      ['REACTIONS_CHANGED', b.id, last.pts],
    ])
    resumed.dispose()

    const changes = (await bob!.run(Changes, { id: group.id, sincePts: b.pts })).conversation!.changes
    expect(changes.messages.map((m) => [m.seq, m.pts])).toEqual([
      [a.seq, reacted.pts + 2],
      [b.seq, last.pts],
    ])
  })

  it('reach only members who may see the message', async () => {
    const [alice, bob, carol] = await newUsers(3)
    const group = await createGroup(alice!, [bob!, carol!])
    const directed = (
      await alice!.run(SendMessage, {
        input: {
          conversationId: group.id,
          clientMessageId: `live-dir-${Math.random()}`,
          content: { text: { text: 'for bob' } },
          visibleToUserIds: [bob!.id],
        },
      })
    ).sendMessage.message
    const open = (await sendText(alice!, group.id, 'for all')).message
    const carolStream = follow(carol!, group.id)
    const bobStream = follow(bob!, group.id)
    await waitForSubscriptions(testApp().app, carol!, 1)
    await waitForSubscriptions(testApp().app, bob!, 1)
    const hidden = (await bob!.run(AddReaction, { messageId: directed.id, emoji: '👍' })).addReaction
    const shown = (await bob!.run(AddReaction, { messageId: open.id, emoji: '👍' })).addReaction
    await bobStream.waitFor(2)
    await carolStream.waitFor(1)
    expect(kinds(bobStream)).toEqual([
      ['REACTIONS_CHANGED', directed.id, hidden.pts],
      ['REACTIONS_CHANGED', open.id, shown.pts],
    ])
    expect(kinds(carolStream)).toEqual([['REACTIONS_CHANGED', open.id, shown.pts]])
    carolStream.dispose()
    bobStream.dispose()
  })
})
