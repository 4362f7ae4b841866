import { describe, expect, it } from 'vitest'
import { codes, newUser, newUsers, testApp } from '../support/harness.ts'
import {
  AddMembers,
  ConversationState,
  CreateChannel,
  createGroup,
  LeaveConversation,
  OpenPrivate,
  RemoveMember,
  sendText,
  SetRole,
  SubscribeChannel,
  UnsubscribeChannel,
} from '../support/operations.ts'
import { MemberPositions, Members, SystemMessages } from '../support/views.ts'

const roles = async (viewer: Awaited<ReturnType<typeof newUser>>, id: string) =>
  Object.fromEntries(
    (await viewer.run(Members, { id, first: 100 })).conversation!.members.edges.map((e) => [
      e.node.user.id,
      e.node.role,
    ]),
  )

describe('private conversations', () => {
  it('gives one conversation per pair, also when both sides open it at the same moment', async () => {
    for (let round = 0; round < 5; round++) {
      const [alice, bob] = await newUsers(2)
      const opened = await Promise.all([
        ...Array.from({ length: 5 }, () => alice!.run(OpenPrivate, { userId: bob!.id })),
        ...Array.from({ length: 5 }, () => bob!.run(OpenPrivate, { userId: alice!.id })),
      ])
      expect(new Set(opened.map((o) => o.openPrivateConversation.id)).size).toBe(1)
      expect(opened[0]!.openPrivateConversation.peer!.id).toBe(bob!.id)
      expect(opened[9]!.openPrivateConversation.peer!.id).toBe(alice!.id)
    }
  })

  it('refuses a conversation with yourself and with an unknown user', async () => {
    const alice = await newUser()
    expect(codes(await alice.try(OpenPrivate, { userId: alice.id }))).toEqual(['BAD_USER_INPUT'])
    expect(
      codes(await alice.try(OpenPrivate, { userId: Buffer.from('User:8999999999').toString('base64url') })),
    ).toEqual(['NOT_FOUND'])
  })
})

describe('groups', () => {
  it('writes membership changes as SYSTEM messages through the same seq allocation', async () => {
    const [owner, bob, carol] = await newUsers(3)
    const group = await createGroup(owner!, [bob!])
    expect(group).toMatchObject({
      type: 'GROUP',
      historyVisibility: 'SHARED',
      lastSeq: 1,
      viewerMember: { role: 'OWNER' },
    })
    await sendText(bob!, group.id, 'hi')
    const added = (await owner!.run(AddMembers, { conversationId: group.id, userIds: [carol!.id, bob!.id] }))
      .addGroupMembers
    expect(added.lastSeq).toBe(3)
    const removed = (await owner!.run(RemoveMember, { conversationId: group.id, userId: carol!.id })).removeGroupMember
    expect(removed.lastSeq).toBe(4)
    const edges = (await owner!.run(SystemMessages, { id: group.id })).conversation!.messages.edges.map((e) => e.node)
    expect(edges.map((m) => [m.seq, m.kind, m.senderType])).toEqual([
      [1, 'SYSTEM', 'SYSTEM'],
      [2, 'TEXT', 'USER'],
      [3, 'SYSTEM', 'SYSTEM'],
      [4, 'SYSTEM', 'SYSTEM'],
    ])
    expect(edges[0]!.content).toMatchObject({
      event: 'CONVERSATION_CREATED',
      actor: { id: owner!.id },
      targets: [{ id: bob!.id }],
    })
    expect(edges[2]!.content).toMatchObject({ event: 'MEMBERS_ADDED', targets: [{ id: carol!.id }] }) // bob was already in
    expect(edges[3]!.content).toMatchObject({
      event: 'MEMBER_REMOVED',
      actor: { id: owner!.id },
      targets: [{ id: carol!.id }],
    })
    expect(edges.filter((m) => m.kind === 'SYSTEM').every((m) => m.sender === null)).toBe(true)
  })

  it('lets owners and admins manage members, and plain members not', async () => {
    const [owner, admin, member, other, newcomer] = await newUsers(5)
    const group = await createGroup(owner!, [admin!, member!, other!])
    await owner!.run(SetRole, { conversationId: group.id, userId: admin!.id, role: 'ADMIN' })
    const before = (await owner!.run(ConversationState, { id: group.id })).conversation!.lastSeq

    expect(codes(await member!.try(AddMembers, { conversationId: group.id, userIds: [newcomer!.id] }))).toEqual([
      'FORBIDDEN',
    ])
    expect(codes(await member!.try(RemoveMember, { conversationId: group.id, userId: other!.id }))).toEqual([
      'FORBIDDEN',
    ])
    expect(codes(await admin!.try(RemoveMember, { conversationId: group.id, userId: owner!.id }))).toEqual([
      'FORBIDDEN',
    ])
    expect(codes(await admin!.try(SetRole, { conversationId: group.id, userId: member!.id, role: 'ADMIN' }))).toEqual([
      'FORBIDDEN',
    ])
    expect(
      codes(await owner!.try(SetRole, { conversationId: group.id, userId: member!.id, role: 'SUBSCRIBER' })),
    ).toEqual(['BAD_USER_INPUT'])
    expect(codes(await owner!.try(RemoveMember, { conversationId: group.id, userId: newcomer!.id }))).toEqual([
      'NOT_FOUND',
    ])
    expect((await owner!.run(ConversationState, { id: group.id })).conversation!.lastSeq).toBe(before)

    await admin!.run(AddMembers, { conversationId: group.id, userIds: [newcomer!.id] })
    await admin!.run(RemoveMember, { conversationId: group.id, userId: other!.id })
    expect(await roles(owner!, group.id)).toEqual({
      [owner!.id]: 'OWNER',
      [admin!.id]: 'ADMIN',
      [member!.id]: 'MEMBER',
      [newcomer!.id]: 'MEMBER',
    })
  })

  it('transfers ownership explicitly, and to an admin when the owner leaves', async () => {
    const [owner, admin, member] = await newUsers(3)
    const group = await createGroup(owner!, [admin!, member!])
    await owner!.run(SetRole, { conversationId: group.id, userId: admin!.id, role: 'ADMIN' })
    await owner!.run(SetRole, { conversationId: group.id, userId: member!.id, role: 'OWNER' })
    expect(await roles(member!, group.id)).toMatchObject({ [owner!.id]: 'ADMIN', [member!.id]: 'OWNER' })
    expect(await member!.run(LeaveConversation, { conversationId: group.id })).toEqual({ leaveConversation: true })
    const after = await roles(owner!, group.id)
    expect(Object.values(after).filter((r) => r === 'OWNER')).toHaveLength(1)
    expect(after[member!.id]).toBeUndefined()
  })

  it('pages members by cursor', async () => {
    const [owner, ...rest] = await newUsers(6)
    const group = await createGroup(owner!, rest)
    const first = (await owner!.run(Members, { id: group.id, first: 4 })).conversation!.members
    const second = (await owner!.run(Members, { id: group.id, first: 4, after: first.pageInfo.endCursor }))
      .conversation!.members
    expect(first.pageInfo.hasNextPage).toBe(true)
    expect(second.pageInfo.hasNextPage).toBe(false)
    const ids = [...first.edges, ...second.edges].map((e) => e.node.user.id)
    expect(new Set(ids)).toEqual(new Set([owner!.id, ...rest.map((u) => u.id)]))
  })
})

describe('channels', () => {
  it('are created by operators, joined by subscribing and left by unsubscribing', async () => {
    const operator = await newUser({ operator: true })
    const reader = await newUser()
    const channel = (await operator.run(CreateChannel, { title: 'Company news' })).createChannel
    expect(channel).toMatchObject({ type: 'CHANNEL', viewerMember: { role: 'OWNER' } })
    const subscribed = await Promise.all(
      [1, 2, 3].map(() => reader.run(SubscribeChannel, { conversationId: channel.id })),
    )
    expect(subscribed.map((s) => s.subscribeChannel.viewerMember.role)).toEqual([
      'SUBSCRIBER',
      'SUBSCRIBER',
      'SUBSCRIBER',
    ])
    expect(await reader.run(UnsubscribeChannel, { conversationId: channel.id })).toEqual({ unsubscribeChannel: true })
    expect(codes(await reader.try(ConversationState, { id: channel.id }))).toEqual(['NOT_FOUND'])
    expect(codes(await operator.try(UnsubscribeChannel, { conversationId: channel.id }))).toEqual(['BAD_USER_INPUT'])
  })
})

describe('members’ read positions', () => {
  it('show other members’ positions only where read receipts are on', async () => {
    const [owner, member] = await newUsers(2)
    const group = await createGroup(owner!, [member!])
    await sendText(owner!, group.id, 'read me') // the sender reads up to its own message
    const positions = async () =>
      Object.fromEntries(
        (await member!.run(MemberPositions, { id: group.id })).conversation!.members.edges.map((e) => [
          e.node.user.id,
          e.node.lastReadSeq,
        ]),
      )
    expect(await positions()).toEqual({ [owner!.id]: 2, [member!.id]: 0 })
    const settings = testApp().app.settings
    settings.readReceipts.group = false
    try {
      expect(await positions()).toEqual({ [owner!.id]: 0, [member!.id]: 0 })
    } finally {
      settings.readReceipts.group = true
    }
  })
})
