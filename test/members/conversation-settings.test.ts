import { describe, expect, it } from 'vitest'
import type { ConversationListQuery } from '../gql/graphql.ts'
import { codes, newUser, newUsers, testApp, type TestUser } from '../support/harness.ts'
import { RecallMessage } from '../support/lifecycle.ts'
import {
  AddMembers,
  createGroup,
  LeaveConversation,
  MarkRead,
  RemoveMember,
  SendMessage,
  sendText,
} from '../support/operations.ts'
import { ConversationList, SaveDraft, UpdateSettings, ViewerSettings } from '../support/settings.ts'

const settingsOf = async (user: TestUser, id: string) =>
  (await user.run(ViewerSettings, { id })).conversation!.viewerSettings
const OFF = {
  doNotDisturbUntil: null,
  doNotDisturb: false,
  pinnedAt: null,
  archived: false,
  markedUnread: false,
  draft: null,
}
const FAR_FUTURE = '9999-12-31T00:00:00.000Z'

/** Every conversation of the viewer's list, `first` at a time, following endCursor. */
async function walk(user: TestUser, first: number, archived = false): Promise<string[]> {
  const ids: string[] = []
  let after: string | null = null
  for (;;) {
    const page: ConversationListQuery = await user.run(ConversationList, { first, after, archived })
    const { conversations } = page.viewer
    ids.push(...conversations.edges.map((e) => e.node.id))
    if (!conversations.pageInfo.hasNextPage) return ids
    after = conversations.pageInfo.endCursor
  }
}

describe('updateConversationSettings', () => {
  it("changes the viewer's own settings only, leaves omitted fields as they are, and turns do-not-disturb off with null", async () => {
    const [owner, member] = await newUsers(2)
    const group = await createGroup(owner!, [member!])
    expect(await settingsOf(member!, group.id)).toEqual(OFF)

    const set = await member!.run(UpdateSettings, {
      id: group.id,
      input: { doNotDisturbUntil: FAR_FUTURE, pinned: true, markedUnread: true },
    })
    const after = set.updateConversationSettings.viewerSettings
    expect(after).toMatchObject({
      doNotDisturbUntil: FAR_FUTURE,
      doNotDisturb: true,
      archived: false,
      markedUnread: true,
    })
    expect(after.pinnedAt).not.toBeNull()
    // Omitted fields stay; pinning again keeps the pin's time.
    await member!.run(UpdateSettings, { id: group.id, input: { archived: true, pinned: true } })
    expect(await settingsOf(member!, group.id)).toEqual({ ...after, archived: true })
    await member!.run(UpdateSettings, { id: group.id, input: { doNotDisturbUntil: null, pinned: false } })
    expect(await settingsOf(member!, group.id)).toEqual({
      ...after,
      archived: true,
      doNotDisturbUntil: null,
      doNotDisturb: false,
      pinnedAt: null,
    })
    // A time in the past is off.
    const past = new Date(Date.now() - 60_000).toISOString()
    await member!.run(UpdateSettings, { id: group.id, input: { doNotDisturbUntil: past } })
    expect(await settingsOf(member!, group.id)).toMatchObject({ doNotDisturbUntil: past, doNotDisturb: false })
    // The other member is never affected.
    expect(await settingsOf(owner!, group.id)).toEqual(OFF)
  })

  it('answers NOT_FOUND for a non-member and an unknown id, BAD_USER_INPUT for null flags and non-DateTimes, and changes nothing', async () => {
    const [owner, member, stranger] = await newUsers(3)
    const group = await createGroup(owner!, [member!])
    expect(codes(await stranger!.try(UpdateSettings, { id: group.id, input: { pinned: true } }))).toEqual(['NOT_FOUND'])
    expect(codes(await stranger!.try(SaveDraft, { id: group.id, draft: { text: 'hi' } }))).toEqual(['NOT_FOUND'])
    expect(
      codes(await member!.try(UpdateSettings, { id: 'Q29udmVyc2F0aW9uOjk5OTk5OTk5OQ', input: { pinned: true } })),
    ).toEqual(['NOT_FOUND'])
    expect(codes(await member!.try(UpdateSettings, { id: group.id, input: { pinned: null, archived: true } }))).toEqual(
      ['BAD_USER_INPUT'],
    )
    expect(
      codes(
        await member!.try(UpdateSettings, { id: group.id, input: { doNotDisturbUntil: 'tomorrow', archived: true } }),
      ),
    ).toEqual(['BAD_USER_INPUT'])
    expect(await settingsOf(member!, group.id)).toEqual(OFF)
  })

  it('markConversationRead clears markedUnread, also with nothing new to read', async () => {
    const [owner, member] = await newUsers(2)
    const group = await createGroup(owner!, [member!])
    await member!.run(MarkRead, { conversationId: group.id })
    await member!.run(UpdateSettings, { id: group.id, input: { markedUnread: true } })
    await member!.run(MarkRead, { conversationId: group.id })
    expect((await settingsOf(member!, group.id)).markedUnread).toBe(false)
  })
})

describe.sequential('the conversation list', () => {
  it('puts pinned ones first (latest pin first), then the rest by activity, and pages exactly at every page size', async () => {
    const viewer = await newUser()
    const friend = await newUser()
    const chats: string[] = []
    for (let i = 0; i < 7; i++) chats.push((await createGroup(friend, [viewer])).id)
    // Activity order, newest first: 6 5 4 3 2 1 0. Pin 1, then 4; then 1 gets new activity.
    await viewer.run(UpdateSettings, { id: chats[1]!, input: { pinned: true } })
    await viewer.run(UpdateSettings, { id: chats[4]!, input: { pinned: true } })
    await sendText(friend, chats[1]!, 'pinned and active')
    await sendText(friend, chats[2]!, 'active')
    const expected = [4, 1, 2, 6, 5, 3, 0].map((i) => chats[i]!)
    for (const first of [1, 2, 3, 7, 20]) expect(await walk(viewer, first), `pages of ${first}`).toEqual(expected)

    // Unpinned, a conversation goes back to its place by activity.
    await viewer.run(UpdateSettings, { id: chats[4]!, input: { pinned: false } })
    expect(await walk(viewer, 2)).toEqual([1, 2, 6, 5, 4, 3, 0].map((i) => chats[i]!))
    // A cursor of another list, or of the old activity-only form, is refused.
    const oldForm = Buffer.from('inbox:2026-01-01T00:00:00.000Z|5').toString('base64url')
    const favoritesCursor = Buffer.from('favorite:2026-01-01T00:00:00.000Z|1|1').toString('base64url')
    for (const after of [
      oldForm,
      favoritesCursor,
      Buffer.from('inbox:2|2026-01-01T00:00:00.000Z|5').toString('base64url'),
    ]) {
      expect(codes(await viewer.try(ConversationList, { first: 2, after }))).toEqual(['BAD_USER_INPUT'])
    }
    // The friend's list does not move with the viewer's pins.
    expect((await walk(friend, 50)).slice(0, 2)).toEqual([chats[2], chats[1]])
  })

  it('shows archived ones only with archived: true; an alerting message brings one back, unless in do-not-disturb without a mention', async () => {
    const [viewer, friend] = await newUsers(2)
    const [quiet, loud, mentioned] = [
      await createGroup(friend!, [viewer!]),
      await createGroup(friend!, [viewer!]),
      await createGroup(friend!, [viewer!]),
    ]
    for (const c of [quiet, loud, mentioned]) await viewer!.run(UpdateSettings, { id: c.id, input: { archived: true } })
    for (const c of [quiet, mentioned])
      await viewer!.run(UpdateSettings, { id: c.id, input: { doNotDisturbUntil: FAR_FUTURE } })
    expect(await walk(viewer!, 1)).toEqual([])
    expect(await walk(viewer!, 1, true)).toEqual([mentioned.id, loud.id, quiet.id])

    // Own messages never bring it back; someone else's do (a mention through do-not-disturb).
    await sendText(viewer!, loud.id, 'mine')
    expect(await walk(viewer!, 5)).toEqual([])
    await sendText(friend!, quiet.id, 'quiet')
    await sendText(friend!, loud.id, 'loud')
    await friend!.run(SendMessage, {
      input: {
        conversationId: mentioned.id,
        clientMessageId: 'm',
        content: { text: { text: 'hey' } },
        mentionUserIds: [viewer!.id],
      },
    })
    expect(await walk(viewer!, 5)).toEqual([mentioned.id, loud.id])
    expect(await walk(viewer!, 5, true)).toEqual([quiet.id])
    // The friend's own settings are untouched by all of it.
    expect((await settingsOf(friend!, quiet.id)).archived).toBe(false)
  })

  it('refuses a pin past the configured limit with LIMIT_REACHED, also when the pins race', async () => {
    const settings = testApp().app.settings
    const [viewer, friend] = await newUsers(2)
    const chats = await Promise.all(Array.from({ length: 8 }, () => createGroup(friend!, [viewer!])))
    settings.pinnedConversationsLimit = 3
    try {
      const results = await Promise.all(
        chats.map((c) => viewer!.try(UpdateSettings, { id: c.id, input: { pinned: true } })),
      )
      const outcome = results.map((r) => codes(r)[0] ?? 'ok')
      expect(outcome.filter((o) => o === 'ok')).toHaveLength(3)
      expect(outcome.filter((o) => o === 'LIMIT_REACHED')).toHaveLength(5)
      const pinned = (await viewer!.run(ConversationList, { first: 20 })).viewer.conversations.edges.filter(
        (e) => e.node.viewerSettings.pinnedAt,
      )
      expect(pinned).toHaveLength(3)
      // Pinning a pinned one again passes; another one does not until one is unpinned.
      const pinnedId = pinned[0]!.node.id
      const other = chats.find((c) => !pinned.some((p) => p.node.id === c.id))!
      expect(codes(await viewer!.try(UpdateSettings, { id: pinnedId, input: { pinned: true } }))).toEqual([])
      expect(
        codes(await viewer!.try(UpdateSettings, { id: other.id, input: { pinned: true, archived: true } })),
      ).toEqual(['LIMIT_REACHED'])
      expect((await settingsOf(viewer!, other.id)).archived).toBe(false)
      await viewer!.run(UpdateSettings, { id: pinnedId, input: { pinned: false } })
      expect(codes(await viewer!.try(UpdateSettings, { id: other.id, input: { pinned: true } }))).toEqual([])
    } finally {
      settings.pinnedConversationsLimit = 5
    }
  })

  it('drops the pin of a member who leaves or is removed, so coming back cannot pass the limit', async () => {
    const settings = testApp().app.settings
    const [viewer, owner] = await newUsers(2)
    const [left, removed, ...others] = await Promise.all(
      Array.from({ length: 4 }, () => createGroup(owner!, [viewer!])),
    )
    settings.pinnedConversationsLimit = 2
    try {
      for (const c of [left!, removed!])
        await viewer!.run(UpdateSettings, { id: c.id, input: { pinned: true, archived: c === left } })
      await viewer!.run(LeaveConversation, { conversationId: left!.id })
      await owner!.run(RemoveMember, { conversationId: removed!.id, userId: viewer!.id })
      for (const c of others) await viewer!.run(UpdateSettings, { id: c.id, input: { pinned: true } })
      for (const c of [left!, removed!]) await owner!.run(AddMembers, { conversationId: c.id, userIds: [viewer!.id] })

      const listed = await Promise.all(
        [false, true].map((archived) => viewer!.run(ConversationList, { first: 20, archived })),
      )
      const pinned = listed.flatMap((l) => l.viewer.conversations.edges).filter((e) => e.node.viewerSettings.pinnedAt)
      expect(pinned.map((e) => e.node.id).sort()).toEqual(others.map((c) => c.id).sort())
      // Only the pin went: the other settings came back with the member.
      expect(await settingsOf(viewer!, left!.id)).toMatchObject({ pinnedAt: null, archived: true })
      expect(codes(await viewer!.try(UpdateSettings, { id: left!.id, input: { pinned: true } }))).toEqual([
        'LIMIT_REACHED',
      ])
    } finally {
      settings.pinnedConversationsLimit = 5
    }
  })
})

describe('drafts', () => {
  it('save text, a quote and mentions, are cleared by null and by a send of the viewer only', async () => {
    const [owner, member] = await newUsers(2)
    const group = await createGroup(owner!, [member!])
    const quoted = await sendText(owner!, group.id, 'quote me')
    const saved = await member!.run(SaveDraft, {
      id: group.id,
      draft: { text: 'half written', quotedMessageId: quoted.message.id, mentionUserIds: [owner!.id] },
    })
    const draft = saved.saveDraft.viewerSettings.draft!
    expect(draft).toMatchObject({
      text: 'half written',
      quotedMessage: { id: quoted.message.id },
      mentions: [{ id: owner!.id }],
    })
    expect(await settingsOf(owner!, group.id)).toEqual(OFF)

    await sendText(owner!, group.id, 'someone else sends')
    expect((await settingsOf(member!, group.id)).draft).toEqual(draft)
    await sendText(member!, group.id, 'sent at last')
    expect((await settingsOf(member!, group.id)).draft).toBeNull()

    await member!.run(SaveDraft, { id: group.id, draft: { text: 'again' } })
    expect((await member!.run(SaveDraft, { id: group.id, draft: null })).saveDraft.viewerSettings.draft).toBeNull()
  })

  it('refuse text over the limit or blank, a quote from another conversation, a non-member mention, and keep the draft', async () => {
    const [owner, member, outsider] = await newUsers(3)
    const group = await createGroup(owner!, [member!])
    const elsewhere = await createGroup(owner!, [member!])
    const foreign = await sendText(owner!, elsewhere.id, 'elsewhere')
    await member!.run(SaveDraft, { id: group.id, draft: { text: 'kept' } })
    const attempts = await Promise.all([
      member!.try(SaveDraft, { id: group.id, draft: { text: 'x'.repeat(10_001) } }),
      member!.try(SaveDraft, { id: group.id, draft: { text: '   ' } }),
      member!.try(SaveDraft, { id: group.id, draft: { text: 'q', quotedMessageId: foreign.message.id } }),
      member!.try(SaveDraft, { id: group.id, draft: { text: 'm', mentionUserIds: [outsider!.id] } }),
    ])
    expect(attempts.map((a) => codes(a))).toEqual([
      ['BAD_USER_INPUT'],
      ['BAD_USER_INPUT'],
      ['NOT_FOUND'],
      ['BAD_USER_INPUT'],
    ])
    const recalled = await sendText(member!, group.id, 'taken back')
    await member!.run(RecallMessage, { messageId: recalled.message.id })
    expect(
      codes(await member!.try(SaveDraft, { id: group.id, draft: { text: 'r', quotedMessageId: recalled.message.id } })),
    ).toEqual(['MESSAGE_RECALLED'])
    // The send above cleared the draft; a rejected send leaves a draft alone.
    await member!.run(SaveDraft, { id: group.id, draft: { text: 'kept' } })
    const rejected = await member!.try(SendMessage, {
      input: {
        conversationId: group.id,
        clientMessageId: 'rejected',
        content: { text: { text: 'no' } },
        mentionUserIds: [outsider!.id],
      },
    })
    expect(codes(rejected)).toEqual(['BAD_USER_INPUT'])
    expect((await settingsOf(member!, group.id)).draft?.text).toBe('kept')
  })
})
