import { describe, expect, it } from 'vitest'
import type { MentionRangeInput } from '../gql/graphql.ts'
import { codes, newUsers } from '../support/harness.ts'
import { EditRanged, ReadRanged, SendRanged } from '../support/mentions.ts'
import { createGroup, lastSeqOf, OpenPrivate } from '../support/operations.ts'

let counter = 0
const send = (conversationId: string, text: string, mentionRanges: MentionRangeInput[], mentionUserIds?: string[]) => ({
  input: {
    conversationId,
    clientMessageId: `ranged-${process.pid}-${++counter}`,
    content: { text: { text, mentionRanges } },
    mentionUserIds,
  },
})

describe('mention ranges', () => {
  it('counts UTF-16 units past emoji surrogate pairs and Chinese text, and returns each range with its user', async () => {
    const [alice, bob, carol] = await newUsers(3)
    const group = await createGroup(alice!, [bob!, carol!])
    // 👋 and 🎉 are two UTF-16 units each; 你好 two units; the ranges sit after them.
    const text = '👋你好 @Bob 🎉 @Carol!'
    const bobAt = text.indexOf('@Bob')
    const carolAt = text.indexOf('@Carol')
    expect([bobAt, carolAt]).toEqual([5, 13])
    const sent = (
      await alice!.run(
        SendRanged,
        send(group.id, text, [
          { start: carolAt, length: '@Carol'.length, userId: carol!.id },
          { start: bobAt, length: '@Bob'.length, userId: bob!.id },
        ]),
      )
    ).sendMessage.message
    const expected = [
      { start: bobAt, length: 4, all: false, user: { id: bob!.id } },
      { start: carolAt, length: 6, all: false, user: { id: carol!.id } },
    ]
    expect(sent.content).toEqual({ text, mentionRanges: expected })
    expect(sent.mentions.map((u) => u.id).sort()).toEqual([bob!.id, carol!.id].sort())
    // What a client slices out with those units is the mention as typed.
    for (const r of expected) expect(text.slice(r.start, r.start + r.length)).toMatch(/^@(Bob|Carol)$/)
    const read = (await bob!.run(ReadRanged, { id: group.id, seq: sent.seq })).conversation!.message!
    expect(read.content).toEqual(sent.content)
  })

  it('merges ranges with mentionUserIds, and @all ranges need the right to @all', async () => {
    const [alice, bob, carol] = await newUsers(3)
    const group = await createGroup(alice!, [bob!, carol!])
    const sent = (
      await alice!.run(SendRanged, send(group.id, '@all and @Bob', [{ start: 0, length: 4, all: true }], [carol!.id]))
    ).sendMessage.message
    expect(sent.mentionsAll).toBe(true)
    expect(sent.mentions.map((u) => u.id)).toEqual([carol!.id])
    expect(sent.content).toMatchObject({ mentionRanges: [{ start: 0, length: 4, all: true, user: null }] })
    // Bob is a plain member: no @all, by range as by flag.
    const before = await lastSeqOf(alice!, group.id)
    expect(codes(await bob!.try(SendRanged, send(group.id, '@all hi', [{ start: 0, length: 4, all: true }])))).toEqual([
      'FORBIDDEN',
    ])
    expect(await lastSeqOf(alice!, group.id)).toBe(before)
  })

  it('refuses invalid ranges and stores nothing', async () => {
    const [alice, bob, stranger] = await newUsers(3)
    const group = await createGroup(alice!, [bob!])
    const text = '🎉 hi @Bob  end'
    const at = text.indexOf('@Bob')
    const cases: [string, MentionRangeInput[]][] = [
      ['past the end', [{ start: at, length: text.length, userId: bob!.id }]],
      ['negative start', [{ start: -1, length: 2, userId: bob!.id }]],
      ['empty', [{ start: at, length: 0, userId: bob!.id }]],
      [
        'overlapping',
        [
          { start: at, length: 4, userId: bob!.id },
          { start: at + 2, length: 3, userId: alice!.id },
        ],
      ],
      ['only whitespace', [{ start: at + 4, length: 2, userId: bob!.id }]],
      ['splits the emoji', [{ start: 1, length: 2, userId: bob!.id }]],
      ['neither user nor all', [{ start: at, length: 4 }]],
      ['both user and all', [{ start: at, length: 4, userId: bob!.id, all: true }]],
      ['not a member', [{ start: at, length: 4, userId: stranger!.id }]],
      ['malformed id', [{ start: at, length: 4, userId: 'nope' }]],
    ]
    const before = await lastSeqOf(alice!, group.id)
    for (const [name, ranges] of cases)
      expect(codes(await alice!.try(SendRanged, send(group.id, text, ranges))), name).toEqual(['BAD_USER_INPUT'])
    expect(await lastSeqOf(alice!, group.id)).toBe(before)
    // Ranges that touch end to end do not overlap.
    await alice!.run(
      SendRanged,
      send(group.id, '@A@B', [
        { start: 0, length: 2, userId: alice!.id },
        { start: 2, length: 2, userId: bob!.id },
      ]),
    )
  })

  it('edits re-check the ranges and add their users to the mentions', async () => {
    const [alice, bob, carol, stranger] = await newUsers(4)
    const group = await createGroup(alice!, [bob!, carol!])
    const sent = (await bob!.run(SendRanged, send(group.id, 'hi @Alice', [{ start: 3, length: 6, userId: alice!.id }])))
      .sendMessage.message
    const messageId = sent.id
    const bad = [
      { text: '中文 @X', mentionRanges: [{ start: 3, length: 2, userId: stranger!.id }] },
      { text: '中文 @X', mentionRanges: [{ start: 3, length: 9, userId: carol!.id }] },
    ]
    for (const text of bad) expect(codes(await bob!.try(EditRanged, { messageId, text }))).toEqual(['BAD_USER_INPUT'])
    // A plain member's edit cannot add @all either.
    expect(
      codes(
        await bob!.try(EditRanged, {
          messageId,
          text: { text: '@all', mentionRanges: [{ start: 0, length: 4, all: true }] },
        }),
      ),
    ).toEqual(['FORBIDDEN'])
    const unchanged = (await alice!.run(ReadRanged, { id: group.id, seq: sent.seq })).conversation!.message!
    expect(unchanged.content).toEqual(sent.content)
    const edited = (
      await bob!.run(EditRanged, {
        messageId,
        text: { text: '中文 @Carol', mentionRanges: [{ start: 3, length: 6, userId: carol!.id }] },
      })
    ).editMessage
    expect(edited.content).toEqual({
      text: '中文 @Carol',
      mentionRanges: [{ start: 3, length: 6, all: false, user: { id: carol!.id } }],
    })
    expect(edited.mentions.map((u) => u.id).sort()).toEqual([alice!.id, carol!.id].sort())
  })

  it('a copy does not carry the ranges of the original', async () => {
    const [alice, bob, carol] = await newUsers(3)
    const group = await createGroup(alice!, [bob!])
    const sent = (await alice!.run(SendRanged, send(group.id, 'hi @Bob', [{ start: 3, length: 4, userId: bob!.id }])))
      .sendMessage.message
    const privateChat = (await alice!.run(OpenPrivate, { userId: carol!.id })).openPrivateConversation
    const copy = (
      await alice!.run(SendRanged, {
        input: {
          conversationId: privateChat.id,
          clientMessageId: `copy-${++counter}`,
          content: { copy: { messageId: sent.id } },
        },
      })
    ).sendMessage.message
    expect(copy.content).toEqual({ text: 'hi @Bob', mentionRanges: [] })
    expect(copy.mentions).toEqual([])
  })
})
