import { describe, expect, it } from 'vitest'
import { codes, newUsers, type TestUser } from '../support/harness.ts'
import { createGroup, sendText } from '../support/operations.ts'
import { SaveDraft, ViewerSettings } from '../support/settings.ts'

const draftOf = async (user: TestUser, id: string) =>
  (await user.run(ViewerSettings, { id })).conversation!.viewerSettings.draft

describe('a draft with mention ranges', () => {
  it('keeps them in UTF-16 units after emoji and Chinese text, names their users, and a send clears them', async () => {
    const [owner, member] = await newUsers(2)
    const group = await createGroup(owner!, [member!])
    // "👋🏽" is four UTF-16 units, "你好 " three: the @ stands at 7.
    const text = '👋🏽你好 @owner and @all'
    const start = text.indexOf('@owner')
    expect(start).toBe(7)
    const saved = await member!.run(SaveDraft, {
      id: group.id,
      draft: {
        text,
        mentionRanges: [
          { start: text.indexOf('@all'), length: 4, all: true },
          { start, length: 6, userId: owner!.id },
        ],
      },
    })
    const draft = saved.saveDraft.viewerSettings.draft!
    expect(draft.mentionRanges).toEqual([
      { start: 7, length: 6, all: false, user: { id: owner!.id } },
      { start: text.indexOf('@all'), length: 4, all: true, user: null },
    ])
    // The range's user is a mention of the draft too.
    expect(draft.mentions).toEqual([{ id: owner!.id }])
    expect(await draftOf(member!, group.id)).toEqual(draft)

    await sendText(member!, group.id, 'sent')
    expect(await draftOf(member!, group.id)).toBeNull()
    // A draft saved without ranges has none.
    await member!.run(SaveDraft, { id: group.id, draft: { text: 'plain' } })
    expect((await draftOf(member!, group.id))!.mentionRanges).toEqual([])
  })

  it('refuses ranges outside the text, splitting an emoji, overlapping or naming a non-member, and keeps the draft', async () => {
    const [owner, member, outsider] = await newUsers(3)
    const group = await createGroup(owner!, [member!])
    await member!.run(SaveDraft, { id: group.id, draft: { text: 'kept' } })
    const text = '😀 @owner'
    const attempts = await Promise.all(
      [
        [{ start: 3, length: 7, userId: owner!.id }],
        [{ start: 1, length: 2, userId: owner!.id }],
        [
          { start: 3, length: 6, userId: owner!.id },
          { start: 5, length: 2, all: true },
        ],
        [{ start: 3, length: 6, userId: outsider!.id }],
      ].map((mentionRanges) => member!.try(SaveDraft, { id: group.id, draft: { text, mentionRanges } })),
    )
    expect(attempts.map((a) => codes(a))).toEqual([
      ['BAD_USER_INPUT'],
      ['BAD_USER_INPUT'],
      ['BAD_USER_INPUT'],
      ['BAD_USER_INPUT'],
    ])
    expect(await draftOf(member!, group.id)).toMatchObject({ text: 'kept', mentionRanges: [] })
  })
})
