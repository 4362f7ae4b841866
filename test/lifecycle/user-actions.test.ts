import { describe, expect, it } from 'vitest'
import { messageGlobalId } from '../../src/domain/core/ids.ts'
import { userTopic } from '../../src/realtime/events.ts'
import { codes, countStatements, newUsers, testApp, type TestUser } from '../support/harness.ts'
import {
  conversationKey,
  DeleteForMe,
  listen,
  messageKey,
  readMessage,
  RecallMessage,
  RestoreForMe,
  SetFavorite,
  SetReminder,
  userKey,
} from '../support/lifecycle.ts'
import { createGroup, sendText } from '../support/operations.ts'
import {
  UserActionsFavorites,
  UserActionsHistoryWithState,
  UserActionsReminders,
  UserActionsViews,
} from '../support/readViews.ts'

/** Which of `seqs` each view shows `user` (history, around, lastMessage, message(seq), changes). */
async function views(user: TestUser, conversationId: string, seq: number) {
  const c = (await user.run(UserActionsViews, { id: conversationId, seq })).conversation!
  return {
    lastMessage: c.lastMessage?.seq ?? null,
    message: c.message?.seq ?? null,
    history: c.messages.edges.map((e) => e.node.seq),
    around: c.messagesAround.edges.map((e) => e.node.seq),
    changes: c.changes.messages.map((m) => m.seq),
  }
}

const favoriteIds = async (user: TestUser) =>
  (await user.run(UserActionsFavorites, { first: 100 })).viewer.favorites.edges.map((e) => e.node.id)
const reminderIds = async (user: TestUser, dueBefore?: string) =>
  (await user.run(UserActionsReminders, { first: 100, dueBefore })).viewer.reminders.edges.map((e) => e.node.id)

describe('deleteMessagesForMe / restoreMessagesForMe', () => {
  it('hides messages from every read path of the viewer only, and brings them back', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    const a = (await sendText(bob!, group.id, 'a')).message
    const b = (await sendText(bob!, group.id, 'b')).message
    const all = await views(alice!, group.id, b.seq)
    expect(all).toMatchObject({ lastMessage: b.seq, message: b.seq })
    expect(all.history.slice(-2)).toEqual([a.seq, b.seq])

    // Duplicates are answered once.
    expect((await alice!.run(DeleteForMe, { ids: [b.id, a.id, b.id] })).deleteMessagesForMe.sort()).toEqual(
      [a.id, b.id].sort(),
    )
    const hidden = await views(alice!, group.id, b.seq)
    expect(hidden.lastMessage).toBe(1) // the CONVERSATION_CREATED message
    expect(hidden.message).toBeNull()
    for (const list of [hidden.history, hidden.around, hidden.changes]) expect(list).not.toContain(a.seq)
    for (const list of [hidden.history, hidden.around, hidden.changes]) expect(list).not.toContain(b.seq)
    expect(await views(bob!, group.id, b.seq)).toEqual(all)

    // Deleting again is a no-op that still answers the ids.
    expect((await alice!.run(DeleteForMe, { ids: [a.id] })).deleteMessagesForMe).toEqual([a.id])
    expect((await alice!.run(RestoreForMe, { ids: [a.id, b.id] })).restoreMessagesForMe).toEqual([a.id, b.id])
    expect(await views(alice!, group.id, b.seq)).toEqual(all)
  })

  it('refuses the whole call when any id is unknown or not visible, and changes nothing', async () => {
    const [alice, bob, outsider] = await newUsers(3)
    const group = await createGroup(alice!, [bob!])
    const other = await createGroup(outsider!, [bob!])
    const mine = (await sendText(bob!, group.id, 'mine')).message
    const theirs = (await sendText(outsider!, other.id, 'not for alice')).message
    const missing = messageGlobalId({ conversationId: conversationKey(group.id), seq: mine.seq + 1000 })

    for (const ids of [
      [mine.id, theirs.id],
      [mine.id, missing],
    ]) {
      expect(codes(await alice!.try(DeleteForMe, { ids }))).toEqual(['NOT_FOUND'])
      expect((await views(alice!, group.id, mine.seq)).message).toBe(mine.seq)
    }
    await alice!.run(DeleteForMe, { ids: [mine.id] })
    expect(codes(await alice!.try(RestoreForMe, { ids: [mine.id, theirs.id] }))).toEqual(['NOT_FOUND'])
    expect((await views(alice!, group.id, mine.seq)).message).toBeNull()

    expect(codes(await alice!.try(DeleteForMe, { ids: [] }))).toEqual(['BAD_USER_INPUT'])
    expect(codes(await alice!.try(DeleteForMe, { ids: Array.from({ length: 101 }, () => mine.id) }))).toEqual([
      'BAD_USER_INPUT',
    ])
    expect(codes(await alice!.try(RestoreForMe, { ids: ['garbage'] }))).toEqual(['BAD_USER_INPUT'])
    expect(
      (await alice!.run(RestoreForMe, { ids: Array.from({ length: 100 }, () => mine.id) })).restoreMessagesForMe,
    ).toEqual([mine.id])
  })
})

describe('favourites', () => {
  it('lists favourites most recently favourited first, keyset paged, per viewer', async () => {
    const [alice, bob] = await newUsers(2)
    const g1 = await createGroup(alice!, [bob!])
    const g2 = await createGroup(bob!, [alice!])
    const m1 = (await sendText(bob!, g1.id, 'one')).message
    const m2 = (await sendText(bob!, g2.id, 'two')).message
    const m3 = (await sendText(alice!, g1.id, 'three')).message
    for (const m of [m2, m1, m3]) {
      expect((await alice!.run(SetFavorite, { messageId: m.id, favorite: true })).setFavorite.viewerState).toEqual({
        favorite: true,
        remindAt: null,
      })
    }
    expect(await favoriteIds(alice!)).toEqual([m3.id, m1.id, m2.id])
    // Favouriting again keeps the place; un- and re-favouriting moves it to the top.
    await alice!.run(SetFavorite, { messageId: m2.id, favorite: true })
    expect(await favoriteIds(alice!)).toEqual([m3.id, m1.id, m2.id])
    await alice!.run(SetFavorite, { messageId: m1.id, favorite: false })
    expect(await favoriteIds(alice!)).toEqual([m3.id, m2.id])
    await alice!.run(SetFavorite, { messageId: m1.id, favorite: true })

    const pages: string[] = []
    let after: string | null | undefined
    for (;;) {
      const page = (await alice!.run(UserActionsFavorites, { first: 1, after })).viewer.favorites
      pages.push(...page.edges.map((e) => e.node.id))
      expect(page.pageInfo.hasPreviousPage).toBe(after != null)
      if (!page.pageInfo.hasNextPage) break
      after = page.pageInfo.endCursor
    }
    expect(pages).toEqual([m1.id, m3.id, m2.id])
    expect(await favoriteIds(bob!)).toEqual([])
    expect((await readMessage(bob!, g1.id, m1.seq)).message!.viewerState.favorite).toBe(false)
    expect(codes(await alice!.try(UserActionsFavorites, { first: 101 }))).toEqual(['BAD_USER_INPUT'])
    expect(codes(await alice!.try(UserActionsFavorites, { after: 'bogus' }))).toEqual(['BAD_USER_INPUT'])
  })
})

describe('reminders', () => {
  it('lists reminders soonest first, filters by dueBefore, and clears with null', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    const [a, b, c] = await Promise.all(['a', 'b', 'c'].map(async (t) => (await sendText(bob!, group.id, t)).message))
    const at = (hours: number) => new Date(Date.now() + hours * 3_600_000).toISOString()
    const times = { [a!.id]: at(30), [b!.id]: at(10), [c!.id]: at(20) }
    for (const m of [a!, b!, c!]) {
      const set = (await alice!.run(SetReminder, { messageId: m.id, remindAt: times[m.id] })).setReminder
      expect(new Date(set.viewerState.remindAt!).toISOString()).toBe(times[m.id])
    }
    expect(await reminderIds(alice!)).toEqual([b!.id, c!.id, a!.id])
    expect(await reminderIds(alice!, at(25))).toEqual([b!.id, c!.id])
    const firstPage = (await alice!.run(UserActionsReminders, { first: 2 })).viewer.reminders
    expect(firstPage.pageInfo.hasNextPage).toBe(true)
    const rest = (await alice!.run(UserActionsReminders, { first: 2, after: firstPage.pageInfo.endCursor })).viewer
      .reminders
    expect(rest.edges.map((e) => e.node.id)).toEqual([a!.id])

    expect(
      (await alice!.run(SetReminder, { messageId: c!.id, remindAt: null })).setReminder.viewerState.remindAt,
    ).toBeNull()
    expect(await reminderIds(alice!)).toEqual([b!.id, a!.id])
    expect(await reminderIds(bob!)).toEqual([])
  })
})

describe('marks after recall and delete-for-me', () => {
  it('drops favourites and reminders of a recalled message and refuses new ones; hides them while deleted for me', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    const recalled = (await sendText(bob!, group.id, 'recalled later')).message
    const deleted = (await sendText(bob!, group.id, 'deleted for alice')).message
    const remindAt = new Date(Date.now() + 3_600_000).toISOString()
    for (const m of [recalled, deleted]) {
      await alice!.run(SetFavorite, { messageId: m.id, favorite: true })
      await alice!.run(SetReminder, { messageId: m.id, remindAt })
    }
    expect((await favoriteIds(alice!)).sort()).toEqual([recalled.id, deleted.id].sort())

    await bob!.run(RecallMessage, { messageId: recalled.id })
    await alice!.run(DeleteForMe, { ids: [deleted.id] })
    expect(await favoriteIds(alice!)).toEqual([])
    expect(await reminderIds(alice!)).toEqual([])
    expect((await readMessage(alice!, group.id, recalled.seq)).message!.viewerState).toEqual({
      favorite: false,
      remindAt: null,
    })
    expect(codes(await alice!.try(SetFavorite, { messageId: recalled.id, favorite: true }))).toEqual([
      'MESSAGE_RECALLED',
    ])
    expect(codes(await alice!.try(SetReminder, { messageId: recalled.id, remindAt }))).toEqual(['MESSAGE_RECALLED'])
    expect(
      (await alice!.run(SetFavorite, { messageId: recalled.id, favorite: false })).setFavorite.viewerState.favorite,
    ).toBe(false)
    // Marks need a message the viewer can see: deleted-for-me ones are NOT_FOUND until restored.
    expect(codes(await alice!.try(SetFavorite, { messageId: deleted.id, favorite: false }))).toEqual(['NOT_FOUND'])

    await alice!.run(RestoreForMe, { ids: [deleted.id] })
    expect(await favoriteIds(alice!)).toEqual([deleted.id])
    expect(await reminderIds(alice!)).toEqual([deleted.id])
  })
})

describe('viewerState and edits on a history page', () => {
  it('cost the same number of statements for 3 messages as for 30', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    for (let i = 0; i < 30; i++) {
      const m = (await sendText(alice!, group.id, `m${i}`)).message
      if (i % 3 === 0) await alice!.run(SetFavorite, { messageId: m.id, favorite: true })
      if (i % 4 === 0)
        await alice!.run(SetReminder, { messageId: m.id, remindAt: new Date(Date.now() + 3_600_000).toISOString() })
    }
    const small = await countStatements(() => alice!.run(UserActionsHistoryWithState, { id: group.id, last: 3 }))
    const large = await countStatements(() => alice!.run(UserActionsHistoryWithState, { id: group.id, last: 30 }))
    expect(large).toBe(small)
    const page = (await alice!.run(UserActionsHistoryWithState, { id: group.id, last: 30 })).conversation!.messages
      .edges
    expect(page.filter((e) => e.node.viewerState.favorite)).toHaveLength(10)
    expect(page.filter((e) => e.node.viewerState.remindAt)).toHaveLength(8)
  })
})

describe('multi-device events', () => {
  it("publishes the viewer's own changes as messageAction events on their user topic, once per change", async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    const m = (await sendText(bob!, group.id, 'x')).message
    const { realtime } = testApp().app
    const mine = await listen(realtime, userTopic(userKey(alice!.id)))
    const theirs = await listen(realtime, userTopic(userKey(bob!.id)))
    try {
      await alice!.run(SetFavorite, { messageId: m.id, favorite: true })
      await alice!.run(SetFavorite, { messageId: m.id, favorite: true }) // no change, no event
      await alice!.run(SetReminder, { messageId: m.id, remindAt: new Date(Date.now() + 60_000).toISOString() })
      await alice!.run(SetReminder, { messageId: m.id, remindAt: null })
      await alice!.run(DeleteForMe, { ids: [m.id] })
      await alice!.run(DeleteForMe, { ids: [m.id] }) // no change, no event
      await alice!.run(RestoreForMe, { ids: [m.id] })
      await alice!.try(SetFavorite, { messageId: 'nonsense', favorite: true })
      const event = { type: 'messageAction', userId: userKey(alice!.id), ...messageKey(m.id) }
      expect(await mine.seen()).toEqual(Array.from({ length: 5 }, () => event))
      expect(await theirs.seen()).toEqual([])
    } finally {
      await mine.stop()
      await theirs.stop()
    }
  })
})
