import { describe, expect, it } from 'vitest'
import { codes, newUser, newUsers } from '../support/harness.ts'
import { EventCursors } from '../support/live.ts'
import {
  AddMembers,
  createGroup,
  MarkRead,
  RemoveMember,
  SendMessage,
  sendText,
  SetRole,
} from '../support/operations.ts'
import { liveServer, subscribeWs } from '../support/server.ts'
import {
  EveryContentKind,
  ShapeMemberNode,
  ShapeNewestCursor,
  ShapeOperatorView,
  ShapeOperatorViewerMember,
  ShapeSendWithEdge,
  ShapeViewer,
  ShapeViewerMember,
} from '../support/views.ts'

/** Contract v2's client shape: what normalized caches (Apollo, urql, Relay) need to update in place. */

describe('content union', () => {
  it('answers one selection with a fragment per member, and SystemContent.text is the rendered sentence', async () => {
    const [owner, bob, carol] = await Promise.all([
      newUser({ name: 'Olga' }),
      newUser({ name: 'Bob' }),
      newUser({ name: 'Carol' }),
    ])
    const group = await createGroup(owner, [bob], 'SHARED', 'Q3 planning')
    await owner.run(AddMembers, { conversationId: group.id, userIds: [carol.id] })
    await owner.run(SetRole, { conversationId: group.id, userId: bob.id, role: 'ADMIN' })
    await owner.run(RemoveMember, { conversationId: group.id, userId: carol.id })
    const file = { file: { url: 'https://files.test/a.pdf', name: 'a.pdf', sizeBytes: 10 } }
    const sticker = { sticker: { stickerId: 'cat', url: 'https://files.test/cat.png', label: 'cat' } }
    for (const [i, content] of [file, sticker].entries()) {
      await owner.run(SendMessage, { input: { conversationId: group.id, clientMessageId: `shape-${i}`, content } })
    }

    const edges = (await bob.run(EveryContentKind, { id: group.id })).conversation!.messages.edges
    expect(edges.map((e) => e.node.content)).toEqual([
      { __typename: 'SystemContent', event: 'CONVERSATION_CREATED', text: 'Olga created “Q3 planning”' },
      { __typename: 'SystemContent', event: 'MEMBERS_ADDED', text: 'Olga added Carol' },
      { __typename: 'SystemContent', event: 'ROLE_CHANGED', text: 'Olga made Bob an admin' },
      { __typename: 'SystemContent', event: 'MEMBER_REMOVED', text: 'Olga removed Carol' },
      { __typename: 'FileContent', url: file.file.url, name: 'a.pdf', sizeBytes: 10 },
      { __typename: 'StickerContent', url: sticker.sticker.url, label: 'cat' },
    ])
  })
})

describe('identities for normalized caches', () => {
  it('gives Viewer a stable id per user', async () => {
    const [alice, bob] = await newUsers(2)
    const first = (await alice!.run(ShapeViewer)).viewer
    expect((await alice!.run(ShapeViewer)).viewer.id).toBe(first.id)
    expect((await bob!.run(ShapeViewer)).viewer.id).not.toBe(first.id)
  })

  it('makes ConversationMember a Node that reaches its conversation, and markConversationRead answers the new unreadCount', async () => {
    const [alice, bob, outsider] = await newUsers(3)
    const group = await createGroup(alice!, [bob!])
    await sendText(alice!, group.id, 'one')
    await sendText(alice!, group.id, 'two')

    const read = (await bob!.run(MarkRead, { conversationId: group.id })).markConversationRead
    expect(read.conversation).toEqual({ id: group.id, unreadCount: 0 })
    const own = (await bob!.run(ShapeViewerMember, { id: group.id })).conversation!
    expect(own.viewerMember.id).toBe(read.id)
    expect(own.members.edges.find((e) => e.node.user.id === bob!.id)!.node.id).toBe(read.id)

    // Any member may fetch any member's node; the id is the same one the connection gives.
    expect((await alice!.run(ShapeMemberNode, { id: read.id })).node).toEqual({
      __typename: 'ConversationMember',
      id: read.id,
      user: { id: bob!.id },
      conversation: { id: group.id },
      lastReadSeq: read.lastReadSeq,
    })
    expect(codes(await outsider!.try(ShapeMemberNode, { id: read.id }))).toEqual(['NOT_FOUND'])
  })

  it('answers sendMessage with the edge Conversation.messages would give', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    const sent = (
      await alice!.run(ShapeSendWithEdge, {
        input: { conversationId: group.id, clientMessageId: 'edge', content: { text: { text: 'hi' } } },
      })
    ).sendMessage
    expect(sent.edge.node).toEqual(sent.message)
    expect((await bob!.run(ShapeNewestCursor, { id: group.id })).conversation!.messages.edges).toEqual([
      { cursor: sent.edge.cursor, node: { id: sent.message.id } },
    ])
  })
})

describe('MessageEvent.cursor', () => {
  const live = liveServer()

  it('is the message’s cursor in Conversation.messages', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    // From the group's current pts: the send below is delivered whenever the subscription starts.
    const stream = subscribeWs(live.connect(bob!.token), EventCursors, {
      conversationId: group.id,
      sincePts: group.lastPts,
    })
    const sent = await sendText(alice!, group.id, 'hi')
    const [event] = await stream.waitFor(1)
    const history = (await bob!.run(ShapeNewestCursor, { id: group.id })).conversation!.messages.edges[0]!
    expect(event!.conversationEvents).toEqual({
      kind: 'ADDED',
      cursor: history.cursor,
      message: { id: sent.message.id },
    })
    stream.dispose()
  })
})

describe('operator view (decision 0014)', () => {
  it('lets adminMessages select the public facts of conversations the operator is not in', async () => {
    const operator = await newUser({ operator: true })
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!], 'SHARED', 'Private matters')
    await sendText(alice!, group.id, 'hello')

    const edges = (await operator.run(ShapeOperatorView, { filter: { conversationId: group.id } })).adminMessages.edges
    expect(edges.length).toBe(2)
    for (const { node } of edges) {
      expect(node.conversation).toMatchObject({
        id: group.id,
        type: 'GROUP',
        title: 'Private matters',
        lastSeq: 2,
        unreadCount: 0,
        peer: null,
      })
      expect(node.conversation.members.edges.map((e) => e.node.user.id).sort()).toEqual([alice!.id, bob!.id].sort())
    }
    const viewerMember = await operator.try(ShapeOperatorViewerMember, { filter: { conversationId: group.id } })
    expect(codes(viewerMember)).toEqual(['FORBIDDEN'])
  })

  it('is for operators only', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    expect(codes(await alice!.try(ShapeOperatorView, { filter: { conversationId: group.id } }))).toEqual(['FORBIDDEN'])
  })
})
