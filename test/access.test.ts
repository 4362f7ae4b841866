import { describe, expect, it } from 'vitest'
import { encodeGlobalId } from '../src/ids.ts'
import { codes, newUser, newUsers, request } from './support/harness.ts'
import { AddMembers, ConversationState, CreateChannel, createGroup, History, LeaveConversation, OpenPrivate, SendMessage, sendText, UpsertUsers, WhoAmI } from './support/operations.ts'
import { NodeById } from './support/views.ts'

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
        outsider!.try(NodeById, { id: encodeGlobalId('Message', `${Buffer.from(conversationId, 'base64url').toString().split(':')[1]}:1`) }),
        outsider!.try(SendMessage, { input: { conversationId, clientMessageId: 'x', content: { text: { text: 'let me in' } } } }),
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
    expect((await bob!.run(NodeById, { id: sent.message.id })).node).toMatchObject({ __typename: 'Message', seq: sent.message.seq })
    expect((await bob!.run(NodeById, { id: group.id })).node).toMatchObject({ __typename: 'Conversation', lastSeq: sent.message.seq })
    expect((await bob!.run(NodeById, { id: alice!.id })).node).toMatchObject({ __typename: 'User', handle: alice!.handle })
  })

  it('takes access away from a member who leaves', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    await bob!.run(LeaveConversation, { conversationId: group.id })
    expect(codes(await bob!.try(History, { id: group.id }))).toEqual(['NOT_FOUND'])
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

  it('keeps operator-only operations to operators (FORBIDDEN otherwise)', async () => {
    const user = await newUser()
    const operator = await newUser({ operator: true })
    expect(codes(await request(user.token, WhoAmI))).toEqual([])
    expect(codes(await request(user.token, UpsertUsers, { users: [{ handle: 'x-forbidden', displayName: 'X' }] }))).toEqual(['FORBIDDEN'])
    expect(codes(await request(user.token, CreateChannel, { title: 'News' }))).toEqual(['FORBIDDEN'])
    const created = await request(operator.token, CreateChannel, { title: 'News' })
    expect(created.data?.createChannel.type).toBe('CHANNEL')
  })
})
