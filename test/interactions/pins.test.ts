import { describe, expect, it } from 'vitest'
import { codes, newUser, newUsers, type TestUser } from '../support/harness.ts'
import { PinMessage, PinnedState, UnpinMessage } from '../support/interactions.ts'
import { MessageBySeq, RecallMessage } from '../support/lifecycle.ts'
import { createGroup, CreateChannel, OpenPrivate, sendText, SetRole, SubscribeChannel } from '../support/operations.ts'
import { LifecycleSystemMessage } from '../support/views.ts'
import { buildVisibilityMatrix } from '../support/visibility.ts'

const pinned = async (user: TestUser, conversationId: string) =>
  (await user.run(PinnedState, { id: conversationId })).conversation!

describe('pinMessage / unpinMessage', () => {
  it('pins newest first, writes one SYSTEM notice per change through seq allocation, and repeats write nothing', async () => {
    const [owner, member] = await newUsers(2)
    const group = await createGroup(owner!, [member!])
    const a = (await sendText(member!, group.id, 'a')).message
    const b = (await sendText(member!, group.id, 'b')).message

    const first = (await owner!.run(PinMessage, { messageId: a.id })).pinMessage
    expect(first).toMatchObject({
      lastSeq: b.seq + 1,
      lastPts: b.pts + 1,
      pinnedMessages: [{ message: { id: a.id }, pinnedBy: { id: owner!.id } }],
    })
    const second = (await owner!.run(PinMessage, { messageId: b.id })).pinMessage
    expect(second.pinnedMessages.map((p) => p.message.id)).toEqual([b.id, a.id])
    // The notice: a SYSTEM message of event MESSAGE_PINNED by the actor, which every member sees.
    const seen = await pinned(member!, group.id)
    expect(seen.lastMessage).toMatchObject({
      seq: b.seq + 2,
      senderType: 'SYSTEM',
      content: { event: 'MESSAGE_PINNED', actor: { id: owner!.id }, text: expect.stringContaining('pinned a message') },
    })
    expect(seen.pinnedMessages.map((p) => p.message.id)).toEqual([b.id, a.id])

    // Idempotent: the same pin again takes no seq and no pts.
    expect((await owner!.run(PinMessage, { messageId: b.id })).pinMessage).toMatchObject({
      lastSeq: second.lastSeq,
      lastPts: second.lastPts,
    })

    const unpinned = (await owner!.run(UnpinMessage, { messageId: b.id })).unpinMessage
    expect(unpinned).toMatchObject({ lastSeq: second.lastSeq + 1, pinnedMessages: [{ message: { id: a.id } }] })
    expect((await pinned(owner!, group.id)).lastMessage!.content).toMatchObject({ event: 'MESSAGE_UNPINNED' })
    expect((await owner!.run(UnpinMessage, { messageId: b.id })).unpinMessage).toMatchObject({
      lastSeq: unpinned.lastSeq,
      lastPts: unpinned.lastPts,
    })
  })

  it('lets a group or channel OWNER or ADMIN pin, either member of a private chat, and refuses the rest with nothing stored', async () => {
    const [owner, admin, member, outsider] = await newUsers(4)
    const group = await createGroup(owner!, [admin!, member!])
    await owner!.run(SetRole, { conversationId: group.id, userId: admin!.id, role: 'ADMIN' })
    const text = (await sendText(member!, group.id, 'pin me')).message
    const before = await pinned(owner!, group.id)

    expect(codes(await member!.try(PinMessage, { messageId: text.id }))).toEqual(['FORBIDDEN'])
    expect(codes(await outsider!.try(PinMessage, { messageId: text.id }))).toEqual(['NOT_FOUND'])
    expect(codes(await outsider!.try(UnpinMessage, { messageId: text.id }))).toEqual(['NOT_FOUND'])
    expect(codes(await owner!.try(PinMessage, { messageId: 'not-an-id' }))).toEqual(['BAD_USER_INPUT'])
    const system = (await owner!.run(LifecycleSystemMessage, { id: group.id })).conversation!.message!
    expect(codes(await owner!.try(PinMessage, { messageId: system.id }))).toEqual(['BAD_USER_INPUT'])
    expect(await pinned(owner!, group.id)).toEqual(before)

    expect((await admin!.run(PinMessage, { messageId: text.id })).pinMessage.pinnedMessages).toHaveLength(1)
    expect(codes(await member!.try(UnpinMessage, { messageId: text.id }))).toEqual(['FORBIDDEN'])
    expect((await pinned(owner!, group.id)).pinnedMessages).toHaveLength(1)

    const chat = (await member!.run(OpenPrivate, { userId: outsider!.id })).openPrivateConversation
    const hello = (await sendText(outsider!, chat.id, 'hello')).message
    expect((await member!.run(PinMessage, { messageId: hello.id })).pinMessage.pinnedMessages).toHaveLength(1)
    expect((await outsider!.run(UnpinMessage, { messageId: hello.id })).unpinMessage.pinnedMessages).toHaveLength(0)
  })

  it('lets a channel OWNER pin and refuses a subscriber', async () => {
    const [subscriber] = await newUsers(1)
    const operator = await newUser({ operator: true })
    const channel = (await operator.run(CreateChannel, { title: 'news' })).createChannel
    await subscriber!.run(SubscribeChannel, { conversationId: channel.id })
    const post = (await sendText(operator, channel.id, 'post')).message
    expect(codes(await subscriber!.try(PinMessage, { messageId: post.id }))).toEqual(['FORBIDDEN'])
    expect((await operator.run(PinMessage, { messageId: post.id })).pinMessage.pinnedMessages).toHaveLength(1)
    expect((await pinned(subscriber!, channel.id)).pinnedMessages.map((p) => p.message.id)).toEqual([post.id])
  })

  it('stops at PINNED_MESSAGES_LIMIT (10) with LIMIT_REACHED; a recalled message drops out and frees its place', async () => {
    const [owner] = await newUsers(1)
    const group = await createGroup(owner!, [])
    const sent = []
    for (let i = 0; i < 11; i++) sent.push((await sendText(owner!, group.id, `m${i}`)).message)
    for (const m of sent.slice(0, 10)) await owner!.run(PinMessage, { messageId: m.id })
    const full = await pinned(owner!, group.id)
    const refused = await owner!.try(PinMessage, { messageId: sent[10]!.id })
    expect(codes(refused)).toEqual(['LIMIT_REACHED'])
    expect(await pinned(owner!, group.id)).toEqual(full)

    await owner!.run(RecallMessage, { messageId: sent[0]!.id })
    const afterRecall = await pinned(owner!, group.id)
    expect(afterRecall.pinnedMessages.map((p) => p.message.id)).not.toContain(sent[0]!.id)
    expect(afterRecall.pinnedMessages).toHaveLength(9)
    expect(codes(await owner!.try(PinMessage, { messageId: sent[0]!.id }))).toEqual(['MESSAGE_RECALLED'])
    expect((await owner!.run(PinMessage, { messageId: sent[10]!.id })).pinMessage.pinnedMessages).toHaveLength(10)
  })

  it('shows each viewer only pins of messages they may see (membership window, directed messages), and directs the notice alike', async () => {
    const m = await buildVisibilityMatrix()
    const ids = new Map<number, string>()
    for (const seq of [2, 3, 6, 9]) {
      const message = (await m.alice.run(MessageBySeq, { id: m.group.id, seq })).conversation!.message!
      ids.set(seq, message.id)
      await m.alice.run(PinMessage, { messageId: message.id })
    }
    for (const viewer of [m.alice, m.bob, m.carol]) {
      const state = await pinned(viewer, m.group.id)
      const expected = [9, 6, 3, 2].filter((seq) => m.visible.get(viewer)!.includes(seq))
      expect(state.pinnedMessages.map((p) => p.message.seq)).toEqual(expected)
    }
    // The notice about the message directed to carol (seq 6) is directed to carol (and the sender alice) too.
    const notice6 = m.lastSeq + 3 // notices follow in pin order: 2, 3, 6, 9
    const notice = (viewer: TestUser) => viewer.run(MessageBySeq, { id: m.group.id, seq: notice6 })
    expect((await notice(m.carol)).conversation!.message).not.toBeNull()
    expect((await notice(m.bob)).conversation!.message).toBeNull()
  })

  it('holds the limit when managers race for the last places: exactly 10 pins, one notice each', async () => {
    const [owner, ...admins] = await newUsers(4)
    const group = await createGroup(owner!, admins)
    for (const admin of admins) await owner!.run(SetRole, { conversationId: group.id, userId: admin.id, role: 'ADMIN' })
    const messages = []
    for (let i = 0; i < 12; i++) messages.push((await sendText(owner!, group.id, `race ${i}`)).message)
    const before = await pinned(owner!, group.id)
    const managers = [owner!, ...admins]
    const results = await Promise.all(
      messages.map((m, i) => managers[i % managers.length]!.try(PinMessage, { messageId: m.id })),
    )
    expect(results.map((r) => codes(r)[0] ?? 'OK').sort()).toEqual(
      [...Array(10).fill('OK'), 'LIMIT_REACHED', 'LIMIT_REACHED'].sort(),
    )
    const after = await pinned(owner!, group.id)
    expect(after.pinnedMessages).toHaveLength(10)
    expect(after.lastSeq).toBe(before.lastSeq + 10)
    expect(after.lastPts).toBe(before.lastPts + 10)
  })
})
