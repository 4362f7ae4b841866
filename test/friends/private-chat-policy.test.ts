import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { codes, newUser, newUsers, testApp, uniqueHandle, userWithHandle, type TestUser } from '../support/harness.ts'
import { EditRanged, ReadRanged } from '../support/mentions.ts'
import { RemoveFriend, RequestFriendship, RespondToFriendship } from '../support/friends.ts'
import {
  BlockUser,
  createGroup,
  lastSeqOf,
  OpenPrivate,
  SendMessage,
  sendText,
  UpsertUsers,
} from '../support/operations.ts'

/** PRIVATE_CHAT_POLICY: this file's app runs with `friends`, except where a test sets `open`. */
const settings = testApp().app.settings
beforeAll(() => {
  settings.privateChatPolicy = 'friends'
})
afterAll(() => {
  settings.privateChatPolicy = 'open'
})

let counter = 0
const trySend = (user: TestUser, conversationId: string, text = 'hi') =>
  user.try(SendMessage, {
    input: { conversationId, clientMessageId: `policy-${process.pid}-${++counter}`, content: { text: { text } } },
  })
const open = (user: TestUser, peer: TestUser) => user.try(OpenPrivate, { userId: peer.id })

async function befriend(a: TestUser, b: TestUser) {
  await a.run(RequestFriendship, { userId: b.id })
  await b.run(RespondToFriendship, { userId: a.id, accept: true })
}

/** A private conversation made while the policy was `open`. */
async function openedEarlier(a: TestUser, b: TestUser): Promise<string> {
  settings.privateChatPolicy = 'open'
  try {
    return (await a.run(OpenPrivate, { userId: b.id })).openPrivateConversation.id
  } finally {
    settings.privateChatPolicy = 'friends'
  }
}

async function agent(): Promise<TestUser> {
  const operator = await newUser({ operator: true })
  const handle = uniqueHandle('agent')
  await operator.run(UpsertUsers, { users: [{ handle, displayName: 'Bot', kind: 'AGENT' }] })
  return userWithHandle(handle)
}

describe('PRIVATE_CHAT_POLICY=friends', () => {
  it('answers NOT_FRIENDS to opening a private conversation with a non-friend, and lets friends in', async () => {
    const [alice, bob] = (await newUsers(2)) as [TestUser, TestUser]
    expect(codes(await open(alice, bob))).toEqual(['NOT_FRIENDS'])
    expect(codes(await open(bob, alice))).toEqual(['NOT_FRIENDS'])
    // A request is not a friendship.
    await alice.run(RequestFriendship, { userId: bob.id })
    expect(codes(await open(alice, bob))).toEqual(['NOT_FRIENDS'])
    await bob.run(RespondToFriendship, { userId: alice.id, accept: true })
    const opened = (await alice.run(OpenPrivate, { userId: bob.id })).openPrivateConversation
    await sendText(alice, opened.id, 'friends now')
    await sendText(bob, opened.id, 'yes')
  })

  it('refuses sends into the private conversation of non-friends, storing nothing; removing a friend stops sends, history stays', async () => {
    const [alice, bob] = (await newUsers(2)) as [TestUser, TestUser]
    const id = await openedEarlier(alice, bob)
    expect(codes(await trySend(alice, id))).toEqual(['NOT_FRIENDS'])
    expect(codes(await trySend(bob, id))).toEqual(['NOT_FRIENDS'])
    expect(await lastSeqOf(alice, id)).toBe(0)

    await befriend(alice, bob)
    await sendText(alice, id, 'before')
    const before = await lastSeqOf(alice, id)
    await bob.run(RemoveFriend, { userId: alice.id })
    expect(codes(await trySend(alice, id, 'after'))).toEqual(['NOT_FRIENDS'])
    expect(codes(await trySend(bob, id, 'after'))).toEqual(['NOT_FRIENDS'])
    expect(await lastSeqOf(alice, id)).toBe(before)
    // An edit is a send of new text: it passes the same check.
    const earlier = (await alice.run(ReadRanged, { id, seq: before })).conversation!.message!
    expect(codes(await alice.try(EditRanged, { messageId: earlier.id, text: { text: 'changed' } }))).toEqual([
      'NOT_FRIENDS',
    ])
    const kept = (await alice.run(ReadRanged, { id, seq: before })).conversation!.message!
    expect(kept.content).toMatchObject({ text: 'before' })
  })

  it('lets a block win over the friendship check (BLOCKED), and leaves groups alone', async () => {
    const [alice, bob, carol] = (await newUsers(3)) as [TestUser, TestUser, TestUser]
    const id = await openedEarlier(alice, bob)
    await bob.run(BlockUser, { userId: alice.id })
    expect(codes(await trySend(alice, id))).toEqual(['BLOCKED'])
    const group = await createGroup(alice, [bob, carol])
    await sendText(carol, group.id, 'groups need no friendship')
  })

  it('exempts operators and AGENT users on either side', async () => {
    const [alice, bob] = (await newUsers(2)) as [TestUser, TestUser]
    const operator = await newUser({ operator: true })
    const byOperator = (await operator.run(OpenPrivate, { userId: alice.id })).openPrivateConversation
    await sendText(operator, byOperator.id, 'from the host system')
    // The exemption is the operator's own: alice still may not answer a non-friend.
    expect(codes(await trySend(alice, byOperator.id))).toEqual(['NOT_FRIENDS'])

    const bot = await agent()
    const byAgent = (await bot.run(OpenPrivate, { userId: bob.id })).openPrivateConversation
    await sendText(bot, byAgent.id, 'how can I help?')
    await sendText(bob, byAgent.id, 'a human answers an agent')
    const toAgent = (await alice.run(OpenPrivate, { userId: bot.id })).openPrivateConversation
    await sendText(alice, toAgent.id, 'a human opens a chat with an agent')
  })

  it('is the open behaviour again with PRIVATE_CHAT_POLICY=open', async () => {
    const [alice, bob] = (await newUsers(2)) as [TestUser, TestUser]
    settings.privateChatPolicy = 'open'
    try {
      const id = (await alice.run(OpenPrivate, { userId: bob.id })).openPrivateConversation.id
      await sendText(bob, id, 'no friendship needed')
    } finally {
      settings.privateChatPolicy = 'friends'
    }
  })
})
