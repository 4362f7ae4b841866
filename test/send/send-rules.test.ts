import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { loadSensitiveWords } from '../../src/domain/send/wordFilter.ts'
import type { SendMessageInput } from '../gql/graphql.ts'
import { codes, newUser, newUsers, testApp, type TestUser } from '../support/harness.ts'
import { EditMessage, RecallMessage } from '../support/lifecycle.ts'
import {
  BlockUser,
  CreateChannel,
  createGroup,
  lastSeqOf,
  MuteMember,
  OpenPrivate,
  SendMessage,
  sendText,
  SetRole,
  SetTitle,
  SubscribeChannel,
  UnblockUser,
} from '../support/operations.ts'
import { RulesLatest } from '../support/views.ts'

let counter = 0
const input = (conversationId: string, extra: Partial<SendMessageInput> = {}): { input: SendMessageInput } => ({
  input: { conversationId, clientMessageId: `rules-${++counter}`, content: { text: { text: 'hello' } }, ...extra },
})
const latest = async (user: TestUser, id: string) => (await user.run(RulesLatest, { id })).conversation!

/** Runs a rejected send and checks its code and that it took no seq. */
async function expectRejected(user: TestUser, variables: { input: SendMessageInput }, code: string) {
  const conversationId = String(variables.input.conversationId)
  const before = await lastSeqOf(user, conversationId)
  expect(codes(await user.try(SendMessage, variables))).toEqual([code])
  expect(await lastSeqOf(user, conversationId)).toBe(before)
}

describe('block', () => {
  it('refuses a private send to a user who blocked you with BLOCKED, until unblocked', async () => {
    const [alice, bob] = await newUsers(2)
    const chat = (await alice!.run(OpenPrivate, { userId: bob!.id })).openPrivateConversation
    expect((await alice!.run(BlockUser, { userId: bob!.id })).blockUser).toBe(true)
    expect((await alice!.run(BlockUser, { userId: bob!.id })).blockUser).toBe(true) // idempotent
    await expectRejected(bob!, input(chat.id), 'BLOCKED')
    // The blocker may still write, and a shared group is not affected.
    await sendText(alice!, chat.id, 'I blocked you')
    const group = await createGroup(alice!, [bob!])
    await sendText(bob!, group.id, 'still here')
    await alice!.run(UnblockUser, { userId: bob!.id })
    await sendText(bob!, chat.id, 'thanks')
    expect(codes(await alice!.try(BlockUser, { userId: alice!.id }))).toEqual(['BAD_USER_INPUT'])
    expect(codes(await alice!.try(BlockUser, { userId: group.id }))).toEqual(['BAD_USER_INPUT'])
    const stranger = Buffer.from('User:8999999999').toString('base64url')
    expect(codes(await alice!.try(BlockUser, { userId: stranger }))).toEqual(['NOT_FOUND'])
  })

  it('refuses an edit by a user the peer has blocked since, until unblocked', async () => {
    const [alice, bob] = await newUsers(2)
    const chat = (await alice!.run(OpenPrivate, { userId: bob!.id })).openPrivateConversation
    const sent = await sendText(bob!, chat.id, 'before the block')
    await alice!.run(BlockUser, { userId: bob!.id })
    expect(codes(await bob!.try(EditMessage, { messageId: sent.message.id, text: 'after the block' }))).toEqual([
      'BLOCKED',
    ])
    await alice!.run(UnblockUser, { userId: bob!.id })
    expect(
      (await bob!.run(EditMessage, { messageId: sent.message.id, text: 'after the unblock' })).editMessage.status,
    ).toBe('EDITED')
  })
})

describe('mute', () => {
  it('refuses a muted member with SENDER_MUTED; mute and unmute are MEMBER_MUTED system messages', async () => {
    const [owner, admin, member] = await newUsers(3)
    const group = await createGroup(owner!, [admin!, member!])
    await owner!.run(SetRole, { conversationId: group.id, userId: admin!.id, role: 'ADMIN' })
    const until = new Date(Date.now() + 3600_000).toISOString()
    const muted = (await admin!.run(MuteMember, { conversationId: group.id, userId: member!.id, until })).muteMember
    expect(muted).toEqual({ user: { id: member!.id }, mutedUntil: until })
    const notice = (await latest(member!, group.id)).lastMessage!
    expect(notice).toMatchObject({
      senderType: 'SYSTEM',
      sender: null,
      kind: 'SYSTEM',
      content: {
        event: 'MEMBER_MUTED',
        actor: { id: admin!.id },
        targets: [{ id: member!.id }],
        text: `${admin!.handle} muted ${member!.handle} until ${until}`,
      },
    })
    expect((await latest(member!, group.id)).viewerMember.mutedUntil).toBe(until)

    await expectRejected(member!, input(group.id), 'SENDER_MUTED')

    const seq = await lastSeqOf(owner!, group.id)
    expect(codes(await member!.try(MuteMember, { conversationId: group.id, userId: admin!.id, until }))).toEqual([
      'FORBIDDEN',
    ])
    expect(codes(await admin!.try(MuteMember, { conversationId: group.id, userId: owner!.id, until }))).toEqual([
      'FORBIDDEN',
    ])
    expect(
      codes(
        await owner!.try(MuteMember, {
          conversationId: group.id,
          userId: member!.id,
          until: new Date(Date.now() - 1000).toISOString(),
        }),
      ),
    ).toEqual(['BAD_USER_INPUT'])
    expect(await lastSeqOf(owner!, group.id)).toBe(seq)

    await owner!.run(MuteMember, { conversationId: group.id, userId: member!.id, until: null })
    expect((await latest(member!, group.id)).lastMessage!.content).toMatchObject({
      event: 'MEMBER_MUTED',
      text: `${owner!.handle} unmuted ${member!.handle}`,
    })
    // Lifting a mute that is not in force writes nothing.
    await owner!.run(MuteMember, { conversationId: group.id, userId: member!.id, until: null })
    expect(await lastSeqOf(owner!, group.id)).toBe(seq + 1)
    await sendText(member!, group.id, 'free again')
  })

  it('works on groups only', async () => {
    const [alice, bob] = await newUsers(2)
    const chat = (await alice!.run(OpenPrivate, { userId: bob!.id })).openPrivateConversation
    expect(
      codes(
        await alice!.try(MuteMember, {
          conversationId: chat.id,
          userId: bob!.id,
          until: new Date(Date.now() + 60_000).toISOString(),
        }),
      ),
    ).toEqual(['BAD_USER_INPUT'])
  })
})

describe('channels', () => {
  it('let only the owner, an admin or an operator post; a subscriber gets FORBIDDEN', async () => {
    const operator = await newUser({ operator: true })
    const [subscriber, promoted] = await newUsers(2)
    const otherOperator = await newUser({ operator: true })
    const channel = (await operator.run(CreateChannel, { title: 'News' })).createChannel
    for (const user of [subscriber!, promoted!, otherOperator])
      await user.run(SubscribeChannel, { conversationId: channel.id })
    await expectRejected(subscriber!, input(channel.id), 'FORBIDDEN')
    await sendText(operator, channel.id, 'from the owner')
    await sendText(otherOperator, channel.id, 'from an operator who subscribed')
    await operator.run(SetRole, { conversationId: channel.id, userId: promoted!.id, role: 'ADMIN' })
    await sendText(promoted!, channel.id, 'from an admin')
  })
})

describe('mentions', () => {
  it('lets only OWNER/ADMIN mention everyone, checks mentioned users, and resolves mentionsViewer per viewer', async () => {
    const [owner, bob, carol, outsider] = await newUsers(4)
    const group = await createGroup(owner!, [bob!, carol!])
    await expectRejected(bob!, input(group.id, { mentionAll: true }), 'FORBIDDEN')
    await expectRejected(bob!, input(group.id, { mentionUserIds: [outsider!.id] }), 'BAD_USER_INPUT')
    // A directed message may mention only its audience.
    await expectRejected(
      owner!,
      input(group.id, { visibleToUserIds: [bob!.id], mentionUserIds: [carol!.id] }),
      'BAD_USER_INPUT',
    )

    await owner!.run(SendMessage, input(group.id, { mentionUserIds: [bob!.id] }))
    const asBob = (await latest(bob!, group.id)).lastMessage!
    const asCarol = (await latest(carol!, group.id)).lastMessage!
    expect(asBob).toMatchObject({ mentions: [{ id: bob!.id }], mentionsAll: false, mentionsViewer: true })
    expect(asCarol).toMatchObject({ mentions: [{ id: bob!.id }], mentionsAll: false, mentionsViewer: false })

    await owner!.run(SendMessage, input(group.id, { mentionAll: true }))
    for (const user of [bob!, carol!])
      expect((await latest(user, group.id)).lastMessage).toMatchObject({ mentionsAll: true, mentionsViewer: true })
  })
})

describe('quotes', () => {
  it('quote a visible message of the same conversation, show a recalled one as a tombstone, refuse to quote a recalled one', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    const other = await createGroup(alice!, [bob!])
    const original = (await sendText(bob!, group.id, 'original')).message
    const elsewhere = (await sendText(bob!, other.id, 'elsewhere')).message
    await expectRejected(alice!, input(group.id, { quotedMessageId: elsewhere.id }), 'NOT_FOUND')

    await alice!.run(SendMessage, input(group.id, { quotedMessageId: original.id }))
    expect((await latest(bob!, group.id)).lastMessage!.quoted).toEqual({
      seq: original.seq,
      status: 'NORMAL',
      content: { text: 'original' },
    })
    await bob!.run(RecallMessage, { messageId: original.id })
    expect((await latest(alice!, group.id)).lastMessage!.quoted).toEqual({
      seq: original.seq,
      status: 'RECALLED',
      content: null,
    })
    await expectRejected(alice!, input(group.id, { quotedMessageId: original.id }), 'MESSAGE_RECALLED')
  })

  it('refuse to forward a recalled message with MESSAGE_RECALLED', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    const kept = (await sendText(bob!, group.id, 'kept')).message
    const gone = (await sendText(bob!, group.id, 'gone')).message
    await bob!.run(RecallMessage, { messageId: gone.id })
    await expectRejected(
      alice!,
      input(group.id, { content: { forward: { messageIds: [kept.id, gone.id] } } }),
      'MESSAGE_RECALLED',
    )
  })
})

describe('senders', () => {
  it('offer no way to send a SYSTEM message; a title change is one, written by the server', async () => {
    const [owner, member] = await newUsers(2)
    const group = await createGroup(owner!, [member!])
    const before = await lastSeqOf(owner!, group.id)
    // MessageContentInput has no system member: the input does not even coerce.
    const forged = await owner!.try(
      SendMessage,
      input(group.id, { content: { system: { event: 'TITLE_CHANGED' } } as never }),
    )
    expect(new Set(codes(forged))).toEqual(new Set(['BAD_USER_INPUT']))
    expect(codes(await member!.try(SetTitle, { conversationId: group.id, title: 'Mine now' }))).toEqual(['FORBIDDEN'])
    expect(codes(await owner!.try(SetTitle, { conversationId: group.id, title: '  ' }))).toEqual(['BAD_USER_INPUT'])
    expect(await lastSeqOf(owner!, group.id)).toBe(before)

    expect((await owner!.run(SetTitle, { conversationId: group.id, title: ' Renamed ' })).setConversationTitle).toEqual(
      { title: 'Renamed', lastSeq: before + 1 },
    )
    expect((await latest(member!, group.id)).lastMessage).toMatchObject({
      senderType: 'SYSTEM',
      sender: null,
      content: {
        event: 'TITLE_CHANGED',
        actor: { id: owner!.id },
        targets: [],
        text: `${owner!.handle} renamed the conversation to “Renamed”`,
      },
    })
    // The same title again changes nothing.
    await owner!.run(SetTitle, { conversationId: group.id, title: 'Renamed' })
    expect(await lastSeqOf(owner!, group.id)).toBe(before + 1)

    const chat = (await owner!.run(OpenPrivate, { userId: member!.id })).openPrivateConversation
    expect(codes(await owner!.try(SetTitle, { conversationId: chat.id, title: 'x' }))).toEqual(['BAD_USER_INPUT'])
  })
})

describe('sensitive words', () => {
  it('rejects readable text containing a listed word with CONTENT_REJECTED, case-insensitively; URLs are not read', async () => {
    const settings = testApp().app.settings
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    const earlier = (await sendText(bob!, group.id, 'a Spoiler from before the list')).message
    const saved = settings.sensitiveWords
    settings.sensitiveWords = loadSensitiveWords(wordFile('# comment\nspoiler\n\n  ＢＡＤ  \n'))
    try {
      expect(settings.sensitiveWords).toEqual(['spoiler', 'bad'])
      const rejected: Partial<SendMessageInput>[] = [
        { content: { text: { text: 'big SPOILER ahead' } } },
        { content: { text: { text: 'full-width ｂａｄ' } } },
        { content: { file: { url: 'https://x.test/f', name: 'spoiler.pdf', sizeBytes: 1 } } },
        { content: { card: { cardType: 'note', data: { deep: { list: ['fine', 'Spoilers'] } } } } },
        { content: { material: { title: 'News', digest: 'no spoilers', url: 'https://x.test/m' } } },
        { content: { forward: { title: 'ok', messageIds: [earlier.id] } } },
      ]
      for (const extra of rejected) await expectRejected(alice!, input(group.id, extra), 'CONTENT_REJECTED')
      await alice!.run(SendMessage, input(group.id, { content: { image: { url: 'https://x.test/spoiler.png' } } }))
      await alice!.run(SendMessage, input(group.id, { content: { text: { text: 'all clean' } } }))
    } finally {
      settings.sensitiveWords = saved
    }
  })
})

function wordFile(text: string): string {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'parley-words-')), 'words.txt')
  writeFileSync(file, text)
  return file
}
