import { describe, expect, it } from 'vitest'
import { graphql } from './gql/index.ts'
import { codes, newUser, newUsers } from './support/harness.ts'
import { createGroup, sendText } from './support/operations.ts'
import { liveServer, subscribeWs } from './support/server.ts'

/** Contract v2's client shape: what normalized caches (Apollo, urql, Relay) need to update in place. */

const EveryContentKind = graphql(`
  query EveryContentKind($id: ID!) {
    conversation(id: $id) {
      messages(last: 20) {
        edges {
          node {
            seq
            content {
              __typename
              ... on TextContent { text }
              ... on ImageContent { url sizeBytes }
              ... on AudioContent { url sizeBytes }
              ... on VideoContent { url sizeBytes }
              ... on FileContent { url name sizeBytes }
              ... on StickerContent { url label }
              ... on CardContent { cardType }
              ... on MaterialContent { title url }
              ... on ForwardContent { title items { content { __typename ... on TextContent { text } ... on SystemContent { text } } } }
              ... on SystemContent { event text }
            }
          }
        }
      }
    }
  }
`)

const Membership = graphql(`
  mutation ShapeMarkRead($id: ID!) {
    markConversationRead(conversationId: $id) { id lastReadSeq conversation { id unreadCount } }
  }
`)

const ViewerIdentity = graphql(`
  query ShapeViewer { viewer { id user { id } } }
`)

const MemberNode = graphql(`
  query ShapeMemberNode($id: ID!) {
    node(id: $id) { __typename id ... on ConversationMember { user { id } conversation { id } lastReadSeq } }
  }
`)

const ViewerMemberId = graphql(`
  query ShapeViewerMember($id: ID!) { conversation(id: $id) { viewerMember { id } members(first: 10) { edges { node { id user { id } } } } } }
`)

const SendWithEdge = graphql(`
  mutation ShapeSendWithEdge($input: SendMessageInput!) {
    sendMessage(input: $input) { message { id seq } edge { cursor node { id seq } } }
  }
`)

const NewestCursor = graphql(`
  query ShapeNewestCursor($id: ID!) { conversation(id: $id) { messages(last: 1) { edges { cursor node { id } } } } }
`)

const EventCursors = graphql(`
  subscription ShapeEventCursors($conversationId: ID!, $sincePts: SafeInt) {
    conversationEvents(conversationId: $conversationId, sincePts: $sincePts) { ... on MessageEvent { kind cursor message { id } } }
  }
`)

const OperatorView = graphql(`
  query ShapeOperatorView($filter: AdminMessageFilter!) {
    adminMessages(filter: $filter, first: 5) {
      edges { node { seq conversation { id type title lastSeq unreadCount peer { id } members(first: 5) { edges { node { user { id } } } } } } }
    }
  }
`)

const OperatorViewerMember = graphql(`
  query ShapeOperatorViewerMember($filter: AdminMessageFilter!) {
    adminMessages(filter: $filter, first: 1) { edges { node { conversation { viewerMember { role } } } } }
  }
`)

describe('content union', () => {
  it('answers one selection with a fragment per member, and SystemContent.text is the rendered sentence', async () => {
    const [owner, bob, carol] = await Promise.all([newUser({ name: 'Olga' }), newUser({ name: 'Bob' }), newUser({ name: 'Carol' })])
    const group = await createGroup(owner, [bob!], 'SHARED', 'Q3 planning')
    await owner.run(graphql(`mutation ShapeAdd($id: ID!, $userIds: [ID!]!) { addGroupMembers(conversationId: $id, userIds: $userIds) { id } }`), {
      id: group.id,
      userIds: [carol.id],
    })
    await owner.run(graphql(`mutation ShapeRole($id: ID!, $userId: ID!) { setMemberRole(conversationId: $id, userId: $userId, role: ADMIN) { role } }`), {
      id: group.id,
      userId: bob.id,
    })
    await owner.run(graphql(`mutation ShapeRemove($id: ID!, $userId: ID!) { removeGroupMember(conversationId: $id, userId: $userId) { id } }`), {
      id: group.id,
      userId: carol.id,
    })
    const file = { file: { url: 'https://files.test/a.pdf', name: 'a.pdf', sizeBytes: 10 } }
    const sticker = { sticker: { stickerId: 'cat', url: 'https://files.test/cat.png', label: 'cat' } }
    for (const [i, content] of [file, sticker].entries()) {
      await owner.run(graphql(`mutation ShapeSend($input: SendMessageInput!) { sendMessage(input: $input) { message { id } } }`), {
        input: { conversationId: group.id, clientMessageId: `shape-${i}`, content },
      })
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
    const first = (await alice!.run(ViewerIdentity)).viewer
    expect((await alice!.run(ViewerIdentity)).viewer.id).toBe(first.id)
    expect((await bob!.run(ViewerIdentity)).viewer.id).not.toBe(first.id)
  })

  it('makes ConversationMember a Node that reaches its conversation, and markConversationRead answers the new unreadCount', async () => {
    const [alice, bob, outsider] = await newUsers(3)
    const group = await createGroup(alice!, [bob!])
    await sendText(alice!, group.id, 'one')
    await sendText(alice!, group.id, 'two')

    const read = (await bob!.run(Membership, { id: group.id })).markConversationRead
    expect(read.conversation).toEqual({ id: group.id, unreadCount: 0 })
    const own = (await bob!.run(ViewerMemberId, { id: group.id })).conversation!
    expect(own.viewerMember.id).toBe(read.id)
    expect(own.members.edges.find((e) => e.node.user.id === bob!.id)!.node.id).toBe(read.id)

    // Any member may fetch any member's node; the id is the same one the connection gives.
    expect((await alice!.run(MemberNode, { id: read.id })).node).toEqual({
      __typename: 'ConversationMember',
      id: read.id,
      user: { id: bob!.id },
      conversation: { id: group.id },
      lastReadSeq: read.lastReadSeq,
    })
    expect(codes(await outsider!.try(MemberNode, { id: read.id }))).toEqual(['NOT_FOUND'])
  })

  it('answers sendMessage with the edge Conversation.messages would give', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    const sent = (await alice!.run(SendWithEdge, { input: { conversationId: group.id, clientMessageId: 'edge', content: { text: { text: 'hi' } } } })).sendMessage
    expect(sent.edge.node).toEqual(sent.message)
    expect((await bob!.run(NewestCursor, { id: group.id })).conversation!.messages.edges).toEqual([{ cursor: sent.edge.cursor, node: { id: sent.message.id } }])
  })
})

describe('MessageEvent.cursor', () => {
  const live = liveServer()

  it('is the message’s cursor in Conversation.messages', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    // From the group's current pts: the send below is delivered whenever the subscription starts.
    const stream = subscribeWs(live.connect(bob!.token), EventCursors, { conversationId: group.id, sincePts: group.lastPts })
    const sent = await sendText(alice!, group.id, 'hi')
    const [event] = await stream.waitFor(1)
    const history = (await bob!.run(NewestCursor, { id: group.id })).conversation!.messages.edges[0]!
    expect(event!.conversationEvents).toEqual({ kind: 'ADDED', cursor: history.cursor, message: { id: sent.message.id } })
    stream.dispose()
  })
})

describe('operator view (decision 0014)', () => {
  it('lets adminMessages select the public facts of conversations the operator is not in', async () => {
    const operator = await newUser({ operator: true })
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!], 'SHARED', 'Private matters')
    await sendText(alice!, group.id, 'hello')

    const edges = (await operator.run(OperatorView, { filter: { conversationId: group.id } })).adminMessages.edges
    expect(edges.length).toBe(2)
    for (const { node } of edges) {
      expect(node.conversation).toMatchObject({ id: group.id, type: 'GROUP', title: 'Private matters', lastSeq: 2, unreadCount: 0, peer: null })
      expect(node.conversation.members.edges.map((e) => e.node.user.id).sort()).toEqual([alice!.id, bob!.id].sort())
    }
    const viewerMember = await operator.try(OperatorViewerMember, { filter: { conversationId: group.id } })
    expect(codes(viewerMember)).toEqual(['FORBIDDEN'])
  })

  it('is for operators only', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    expect(codes(await alice!.try(OperatorView, { filter: { conversationId: group.id } }))).toEqual(['FORBIDDEN'])
  })
})
