import { describe, expect, it } from 'vitest'
import { encodeGlobalId } from '../../src/domain/core/ids.ts'
import { signToken } from '../../src/http/auth/hs256.ts'
import { AUTH_SECRET, codes, newUser, newUsers, request, type TestUser } from '../support/harness.ts'
import { EditMessage, RecallMessage, SetFavorite, SetReminder } from '../support/lifecycle.ts'
import { ConversationEvents, SendTyping } from '../support/live.ts'
import {
  AddMembers,
  ConversationState,
  CreateChannel,
  createGroup,
  History,
  LeaveConversation,
  MarkRead,
  OpenPrivate,
  RemoveMember,
  SendMessage,
  sendText,
  SetTitle,
  SubscribeChannel,
  UnsubscribeChannel,
  UpsertUsers,
  WhoAmI,
} from '../support/operations.ts'
import { liveServer, subscribeWs, waitForSubscriptions } from '../support/server.ts'
import { NodeById } from '../support/views.ts'

describe('access for non-members', () => {
  it('answers NOT_FOUND on every path, exactly as for a conversation that does not exist', async () => {
    const [alice, bob, outsider] = await newUsers(3)
    const group = await createGroup(alice!, [bob!])
    const privateChat = (await alice!.run(OpenPrivate, { userId: bob!.id })).openPrivateConversation
    const sent = await sendText(alice!, group.id, 'members only')
    const missing = encodeGlobalId('Conversation', 9_000_000_000)

    for (const conversationId of [group.id, privateChat.id, missing]) {
      const attempts = [
        outsider!.try(ConversationState, { id: conversationId }),
        outsider!.try(History, { id: conversationId }),
        outsider!.try(NodeById, { id: conversationId }),
        outsider!.try(NodeById, {
          id: encodeGlobalId('Message', `${Buffer.from(conversationId, 'base64url').toString().split(':')[1]}:1`),
        }),
        outsider!.try(SendMessage, {
          input: { conversationId, clientMessageId: 'x', content: { text: { text: 'let me in' } } },
        }),
        outsider!.try(AddMembers, { conversationId, userIds: [alice!.id] }),
        outsider!.try(LeaveConversation, { conversationId }),
      ]
      for (const response of await Promise.all(attempts)) {
        expect(codes(response)).toEqual(['NOT_FOUND'])
        expect(JSON.stringify(response)).not.toContain('members only')
      }
    }
    expect(codes(await outsider!.try(NodeById, { id: sent.message.id }))).toEqual(['NOT_FOUND'])
    // Nothing was written by the refused calls.
    expect((await alice!.run(ConversationState, { id: group.id })).conversation!.lastSeq).toBe(sent.message.seq)
  })

  it('lets members read the same nodes', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    const sent = await sendText(alice!, group.id, 'hello')
    expect((await bob!.run(NodeById, { id: sent.message.id })).node).toMatchObject({
      __typename: 'Message',
      seq: sent.message.seq,
    })
    expect((await bob!.run(NodeById, { id: group.id })).node).toMatchObject({
      __typename: 'Conversation',
      lastSeq: sent.message.seq,
    })
    expect((await bob!.run(NodeById, { id: alice!.id })).node).toMatchObject({
      __typename: 'User',
      handle: alice!.handle,
    })
  })

  it('takes access away from a member who leaves', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    await bob!.run(LeaveConversation, { conversationId: group.id })
    expect(codes(await bob!.try(History, { id: group.id }))).toEqual(['NOT_FOUND'])
  })
})

describe('access after a membership change', () => {
  const live = liveServer()

  /** Every action a member could take on `conversationId` and their message `messageId`; each must be NOT_FOUND. */
  const actions = (user: TestUser, conversationId: string, messageId: string) => ({
    sendTyping: user.try(SendTyping, { id: conversationId }),
    sendMessage: user.try(SendMessage, {
      input: { conversationId, clientMessageId: `after-${Math.random()}`, content: { text: { text: 'still here?' } } },
    }),
    history: user.try(History, { id: conversationId }),
    markRead: user.try(MarkRead, { conversationId }),
    edit: user.try(EditMessage, { messageId, text: 'edited after' }),
    recall: user.try(RecallMessage, { messageId }),
    favorite: user.try(SetFavorite, { messageId, favorite: true }),
    reminder: user.try(SetReminder, { messageId, remindAt: new Date(Date.now() + 60_000).toISOString() }),
    title: user.try(SetTitle, { conversationId, title: 'mine now' }),
    node: user.try(NodeById, { id: messageId }),
  })

  async function expectNotFoundEverywhere(user: TestUser, conversationId: string, messageId: string) {
    for (const [name, response] of Object.entries(actions(user, conversationId, messageId)))
      expect(codes(await response), name).toEqual(['NOT_FOUND'])
  }

  it('refuses every action at once after removal or leave, typing inside its throttle interval included', async () => {
    const [alice, bob, carol, erin] = await newUsers(4)
    const group = await createGroup(alice!, [bob!, carol!, erin!])
    const events = subscribeWs(live.connect(alice!.token), ConversationEvents, { conversationId: group.id })
    await waitForSubscriptions(live.server.app, alice!, 1)
    const bobs = await sendText(bob!, group.id, 'from bob')
    const carols = await sendText(carol!, group.id, 'from carol')
    // Typed just before losing access: the next call falls inside the 2 s throttle interval.
    expect((await bob!.run(SendTyping, { id: group.id })).sendTyping).toBe(true)
    expect((await carol!.run(SendTyping, { id: group.id })).sendTyping).toBe(true)
    await alice!.run(RemoveMember, { conversationId: group.id, userId: bob!.id })
    await carol!.run(LeaveConversation, { conversationId: group.id })
    const before = (await alice!.run(ConversationState, { id: group.id })).conversation
    await expectNotFoundEverywhere(bob!, group.id, bobs.message.id)
    await expectNotFoundEverywhere(carol!, group.id, carols.message.id)
    expect((await alice!.run(ConversationState, { id: group.id })).conversation).toEqual(before)
    // Alice saw bob's and carol's typing from before, then only erin's.
    expect((await erin!.run(SendTyping, { id: group.id })).sendTyping).toBe(true)
    const typists = (all: typeof events.events) =>
      all.flatMap((e) => (e.conversationEvents.__typename === 'TypingEvent' ? [e.conversationEvents.user.id] : []))
    await events.waitUntil((all) => typists(all).length >= 3)
    expect(typists(events.events)).toEqual([bob!.id, carol!.id, erin!.id])
  })

  it('refuses a channel subscriber who unsubscribed', async () => {
    const [operator, reader] = [await newUser({ operator: true }), await newUser()]
    const channel = (await operator.run(CreateChannel, { title: 'news' })).createChannel
    await reader.run(SubscribeChannel, { conversationId: channel.id })
    const post = await sendText(operator, channel.id, 'post')
    expect((await reader.run(SendTyping, { id: channel.id })).sendTyping).toBe(true)
    await reader.run(UnsubscribeChannel, { conversationId: channel.id })
    expect(codes(await reader.try(SendTyping, { id: channel.id }))).toEqual(['NOT_FOUND'])
    expect(codes(await reader.try(History, { id: channel.id }))).toEqual(['NOT_FOUND'])
    expect(codes(await reader.try(SetFavorite, { messageId: post.message.id, favorite: true }))).toEqual(['NOT_FOUND'])
  })
})

describe('authentication', () => {
  it('refuses requests without a token, with a malformed header, and with a bad signature', async () => {
    const user = await newUser()
    const anonymous = await request(null, WhoAmI)
    expect(codes(anonymous)).toEqual(['UNAUTHENTICATED'])
    const wrongScheme = await request(null, WhoAmI, undefined, { authorization: `Basic ${user.token}` })
    expect(codes(wrongScheme)).toEqual(['UNAUTHENTICATED'])
    const [header, payload] = user.token.split('.')
    const forged = await request(`${header}.${payload}.AAAA`, WhoAmI)
    expect(codes(forged)).toEqual(['UNAUTHENTICATED'])
    expect(JSON.stringify(forged)).not.toMatch(/stack|at .*\.ts/)
  })

  it('refuses a token once it expires, though it was verified (and remembered) while valid', async () => {
    const user = await newUser()
    const shortLived = await signToken(AUTH_SECRET, user.handle, { expiresIn: '2s' })
    const expiresAt =
      (JSON.parse(Buffer.from(shortLived.split('.')[1]!, 'base64url').toString()) as { exp: number }).exp * 1000
    expect(codes(await request(shortLived, WhoAmI))).toEqual([])
    expect(codes(await request(shortLived, WhoAmI))).toEqual([])
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, expiresAt - Date.now()) + 50))
    const expired = await request(shortLived, WhoAmI)
    expect(codes(expired)).toEqual(['UNAUTHENTICATED'])
    expect(expired.errors![0]!.message).toBe('invalid or expired token')
  })

  it('keeps operator-only operations to operators (FORBIDDEN otherwise)', async () => {
    const user = await newUser()
    const operator = await newUser({ operator: true })
    expect(codes(await request(user.token, WhoAmI))).toEqual([])
    expect(
      codes(await request(user.token, UpsertUsers, { users: [{ handle: 'x-forbidden', displayName: 'X' }] })),
    ).toEqual(['FORBIDDEN'])
    expect(codes(await request(user.token, CreateChannel, { title: 'News' }))).toEqual(['FORBIDDEN'])
    const created = await request(operator.token, CreateChannel, { title: 'News' })
    expect(created.data?.createChannel.type).toBe('CHANNEL')
  })
})
