import { describe, expect, it } from 'vitest'
import { encodeGlobalId } from '../src/ids.ts'
import { graphql } from './gql/index.ts'
import { codes, newUser, newUsers, request } from './support/harness.ts'
import { ConversationState, createGroup, History, OpenPrivate, SendMessage, sendText } from './support/operations.ts'

const NodeById = graphql(`
  query NodeById($id: ID!) {
    node(id: $id) { id __typename ... on Message { seq } ... on Conversation { lastSeq } ... on User { handle } }
  }
`)

const AddMembers = graphql(`
  mutation AddMembers($conversationId: ID!, $userIds: [ID!]!) {
    addGroupMembers(conversationId: $conversationId, userIds: $userIds) { id }
  }
`)

const Leave = graphql(`
  mutation Leave($conversationId: ID!) { leaveConversation(conversationId: $conversationId) }
`)

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
        outsider!.try(Leave, { conversationId }),
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
    await bob!.run(Leave, { conversationId: group.id })
    expect(codes(await bob!.try(History, { id: group.id }))).toEqual(['NOT_FOUND'])
  })
})

describe('authentication', () => {
  it('refuses requests without a token, with a malformed header, and with a bad signature', async () => {
    const user = await newUser()
    const anonymous = await request(null, '{ viewer { user { id } } }')
    expect(codes(anonymous)).toEqual(['UNAUTHENTICATED'])
    const wrongScheme = await request(null, '{ viewer { user { id } } }', undefined, { authorization: `Basic ${user.token}` })
    expect(codes(wrongScheme)).toEqual(['UNAUTHENTICATED'])
    const [header, payload] = user.token.split('.')
    const forged = await request(`${header}.${payload}.AAAA`, '{ viewer { user { id } } }')
    expect(codes(forged)).toEqual(['UNAUTHENTICATED'])
    expect(JSON.stringify(forged)).not.toMatch(/stack|at .*\.ts/)
  })

  it('keeps operator-only operations to operators (FORBIDDEN otherwise)', async () => {
    const user = await newUser()
    const operator = await newUser({ operator: true })
    const upsert = '{ __typename }'
    expect(codes(await request(user.token, upsert))).toEqual([])
    const mutation = 'mutation { upsertUsers(users: [{ handle: "x-forbidden", displayName: "X" }]) { id } }'
    expect(codes(await request(user.token, mutation))).toEqual(['FORBIDDEN'])
    expect(codes(await request(user.token, 'mutation { createChannel(title: "News") { id } }'))).toEqual(['FORBIDDEN'])
    const created = await request<{ createChannel: { id: string; type: string } }, never>(operator.token, 'mutation { createChannel(title: "News") { id type } }')
    expect(created.data?.createChannel.type).toBe('CHANNEL')
  })
})
