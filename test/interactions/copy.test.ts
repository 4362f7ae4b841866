import { describe, expect, it } from 'vitest'
import { codes, newUsers, request, testApp, type TestUser } from '../support/harness.ts'
import { CopiedBySeq, SendCopy } from '../support/interactions.ts'
import { EditMessage, RecallMessage } from '../support/lifecycle.ts'
import { BlockUser, createGroup, MuteMember, OpenPrivate, SendMessage, sendText } from '../support/operations.ts'
import { LifecycleSystemMessage } from '../support/views.ts'

let counter = 0
const copy = (user: TestUser, conversationId: string, messageId: string) =>
  user.try(SendCopy, { conversationId, clientMessageId: `copy-${process.pid}-${++counter}`, messageId })
const counters = async (user: TestUser, id: string) => {
  const { lastSeq, lastPts } = (await user.run(CopiedBySeq, { id, seq: 1 })).conversation!
  return { lastSeq, lastPts }
}

describe('content.copy: forwarding one message as itself', () => {
  it('takes the original kind and content as a snapshot, and names its origin; a copy of a copy names the first', async () => {
    const [alice, bob, carol] = await newUsers(3)
    const group = await createGroup(alice!, [bob!], 'SHARED', 'Design team')
    const image = (
      await alice!.run(SendMessage, {
        input: {
          conversationId: group.id,
          clientMessageId: `img-${Math.random()}`,
          content: { image: { url: 'https://example.com/cat.png', width: 640 } },
        },
      })
    ).sendMessage.message
    const text = (await sendText(alice!, group.id, 'original words')).message
    const chat = (await bob!.run(OpenPrivate, { userId: carol!.id })).openPrivateConversation

    const copiedImage = (await copy(bob!, chat.id, image.id)).data!.sendMessage.message
    expect(copiedImage).toMatchObject({
      kind: 'IMAGE',
      content: { __typename: 'ImageContent', url: 'https://example.com/cat.png', width: 640 },
    })
    expect(copiedImage.forwardedFrom).toEqual({
      senderName: expect.any(String),
      sentAt: image.sentAt,
      conversationTitle: 'Design team',
    })
    const copiedText = (await copy(bob!, chat.id, text.id)).data!.sendMessage.message
    await alice!.run(EditMessage, { messageId: text.id, text: 'edited later' })
    expect((await carol!.run(CopiedBySeq, { id: chat.id, seq: copiedText.seq })).conversation!.message).toEqual(
      copiedText,
    )
    expect(copiedText.content).toEqual({ __typename: 'TextContent', text: 'original words' })
    // Nor can the forwarder put new words under the original's name.
    expect(codes(await bob!.try(EditMessage, { messageId: copiedText.id, text: 'bob words' }))).toEqual([
      'NOT_EDITABLE',
    ])

    // Carol copies bob's copy on: the origin stays alice's message in the group.
    const group2 = await createGroup(carol!, [], 'SHARED', 'Elsewhere')
    const again = (await copy(carol!, group2.id, copiedText.id)).data!.sendMessage.message
    expect(again.forwardedFrom).toEqual(copiedText.forwardedFrom)

    // A merged forward can be copied too; an ordinary message has no origin.
    const merged = (
      await alice!.run(SendMessage, {
        input: {
          conversationId: group.id,
          clientMessageId: `fwd-${Math.random()}`,
          content: { forward: { messageIds: [image.id, text.id] } },
        },
      })
    ).sendMessage.message
    const copiedForward = (await copy(bob!, chat.id, merged.id)).data!.sendMessage.message
    expect(copiedForward).toMatchObject({ kind: 'FORWARD', content: { __typename: 'ForwardContent', items: [{}, {}] } })
    expect(
      (await bob!.run(CopiedBySeq, { id: group.id, seq: text.seq })).conversation!.message!.forwardedFrom,
    ).toBeNull()
  })

  it('refuses an original the sender cannot see, a recalled one and a SYSTEM notice, storing nothing and taking no seq', async () => {
    const [alice, bob, carol] = await newUsers(3)
    const group = await createGroup(alice!, [bob!, carol!])
    const directed = (
      await alice!.run(SendMessage, {
        input: {
          conversationId: group.id,
          clientMessageId: `d-${Math.random()}`,
          content: { text: { text: 'for bob' } },
          visibleToUserIds: [bob!.id],
        },
      })
    ).sendMessage.message
    const recalled = (await sendText(alice!, group.id, 'oops')).message
    await alice!.run(RecallMessage, { messageId: recalled.id })
    const system = (await alice!.run(LifecycleSystemMessage, { id: group.id })).conversation!.message!
    const outsideGroup = await createGroup(bob!, [])
    const outside = (await sendText(bob!, outsideGroup.id, 'not for carol')).message
    const before = await counters(carol!, group.id)

    expect(codes(await copy(carol!, group.id, directed.id))).toEqual(['NOT_FOUND'])
    expect(codes(await copy(carol!, group.id, outside.id))).toEqual(['NOT_FOUND'])
    expect(codes(await copy(carol!, group.id, recalled.id))).toEqual(['MESSAGE_RECALLED'])
    expect(codes(await copy(carol!, group.id, system.id))).toEqual(['BAD_USER_INPUT'])
    expect(codes(await copy(carol!, group.id, 'nope'))).toEqual(['BAD_USER_INPUT'])
    expect(await counters(carol!, group.id)).toEqual(before)
    // An edit cannot turn a message into a copy.
    const own = (await sendText(carol!, group.id, 'mine')).message
    const editToCopy =
      'mutation($id: ID!, $of: ID!) { editMessage(messageId: $id, content: { copy: { messageId: $of } }) { id } }'
    expect(codes(await request(carol!.token, editToCopy, { id: own.id, of: directed.id }))).toEqual(['BAD_USER_INPUT'])
    expect((await carol!.run(CopiedBySeq, { id: group.id, seq: own.seq })).conversation!.message!.content).toEqual({
      __typename: 'TextContent',
      text: 'mine',
    })
  })

  it('applies the sending rules to the copy: mute, block and the word filter', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    const bad = (await sendText(alice!, group.id, 'a forbiddenword here')).message
    const fine = (await sendText(alice!, group.id, 'fine')).message
    const chat = (await bob!.run(OpenPrivate, { userId: alice!.id })).openPrivateConversation
    const settings = testApp().app.settings
    const saved = settings.sensitiveWords
    settings.sensitiveWords = ['forbiddenword']
    try {
      expect(codes(await copy(bob!, chat.id, bad.id))).toEqual(['CONTENT_REJECTED'])
    } finally {
      settings.sensitiveWords = saved
    }
    await alice!.run(BlockUser, { userId: bob!.id })
    expect(codes(await copy(bob!, chat.id, fine.id))).toEqual(['BLOCKED'])
    await alice!.run(MuteMember, {
      conversationId: group.id,
      userId: bob!.id,
      until: new Date(Date.now() + 60_000).toISOString(),
    })
    expect(codes(await copy(bob!, group.id, fine.id))).toEqual(['SENDER_MUTED'])
    expect((await counters(alice!, chat.id)).lastSeq).toBe(0)
  })
})
