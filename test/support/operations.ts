import { graphql } from '../gql/index.ts'
import type { TestUser } from './harness.ts'

/** Every operation document of the tests is defined once under test/support; these are the actions on conversations. */

export const WhoAmI = graphql(`
  query WhoAmI {
    viewer {
      user {
        id
      }
    }
  }
`)

export const OpenPrivate = graphql(`
  mutation OpenPrivate($userId: ID!) {
    openPrivateConversation(userId: $userId) {
      id
      type
      lastSeq
      peer {
        id
      }
    }
  }
`)

export const CreateGroup = graphql(`
  mutation CreateGroup($input: CreateGroupInput!) {
    createGroup(input: $input) {
      id
      type
      title
      historyVisibility
      lastSeq
      lastPts
      viewerMember {
        role
      }
    }
  }
`)

/** Every field a send answers with that a later read must answer alike (test/send/send-coalescing.test.ts). */
// A fragment for codegen: the operations that spread it carry it in their generated documents.
graphql(`
  fragment StoredFields on Message {
    id
    seq
    pts
    kind
    senderType
    clientMessageId
    status
    sentAt
    editedAt
    recalledAt
    mentionsAll
    sender {
      id
    }
    mentions {
      id
    }
    content {
      __typename
      ... on TextContent {
        text
      }
      ... on CardContent {
        cardType
        data
      }
    }
  }
`)

export const SendStored = graphql(`
  mutation SendStored($input: SendMessageInput!) {
    sendMessage(input: $input) {
      deduplicated
      message {
        ...StoredFields
      }
    }
  }
`)

export const ReadStored = graphql(`
  query ReadStored($id: ID!) {
    node(id: $id) {
      ...StoredFields
    }
  }
`)

export const SendMessage = graphql(`
  mutation SendMessage($input: SendMessageInput!) {
    sendMessage(input: $input) {
      deduplicated
      message {
        id
        seq
        pts
        kind
        senderType
        clientMessageId
        status
        sentAt
        sender {
          id
        }
        content {
          __typename
          ... on TextContent {
            text
          }
        }
      }
    }
  }
`)

export const AddMembers = graphql(`
  mutation AddMembers($conversationId: ID!, $userIds: [ID!]!) {
    addGroupMembers(conversationId: $conversationId, userIds: $userIds) {
      id
      lastSeq
      lastPts
    }
  }
`)

export const RemoveMember = graphql(`
  mutation RemoveMember($conversationId: ID!, $userId: ID!) {
    removeGroupMember(conversationId: $conversationId, userId: $userId) {
      id
      lastSeq
    }
  }
`)

export const LeaveConversation = graphql(`
  mutation LeaveConversation($conversationId: ID!) {
    leaveConversation(conversationId: $conversationId)
  }
`)

export const SetRole = graphql(`
  mutation SetRole($conversationId: ID!, $userId: ID!, $role: MemberRole!) {
    setMemberRole(conversationId: $conversationId, userId: $userId, role: $role) {
      role
      user {
        id
      }
    }
  }
`)

export const SetTitle = graphql(`
  mutation SetTitle($conversationId: ID!, $title: String!) {
    setConversationTitle(conversationId: $conversationId, title: $title) {
      title
      lastSeq
    }
  }
`)

export const MuteMember = graphql(`
  mutation MuteMember($conversationId: ID!, $userId: ID!, $until: DateTime) {
    muteMember(conversationId: $conversationId, userId: $userId, until: $until) {
      user {
        id
      }
      mutedUntil
    }
  }
`)

export const CreateChannel = graphql(`
  mutation CreateChannel($title: String!) {
    createChannel(title: $title) {
      id
      type
      viewerMember {
        role
      }
    }
  }
`)

export const SubscribeChannel = graphql(`
  mutation SubscribeChannel($conversationId: ID!) {
    subscribeChannel(conversationId: $conversationId) {
      id
      viewerMember {
        role
      }
    }
  }
`)

export const UnsubscribeChannel = graphql(`
  mutation UnsubscribeChannel($conversationId: ID!) {
    unsubscribeChannel(conversationId: $conversationId)
  }
`)

export const BlockUser = graphql(`
  mutation BlockUser($userId: ID!) {
    blockUser(userId: $userId)
  }
`)

export const UnblockUser = graphql(`
  mutation UnblockUser($userId: ID!) {
    unblockUser(userId: $userId)
  }
`)

export const UpsertUsers = graphql(`
  mutation UpsertUsers($users: [UserInput!]!) {
    upsertUsers(users: $users) {
      id
      handle
      displayName
      kind
    }
  }
`)

export const MarkRead = graphql(`
  mutation MarkRead($conversationId: ID!, $seq: SafeInt) {
    markConversationRead(conversationId: $conversationId, seq: $seq) {
      id
      lastReadSeq
      user {
        id
      }
      conversation {
        id
        unreadCount
      }
    }
  }
`)

export const ConversationState = graphql(`
  query ConversationState($id: ID!) {
    conversation(id: $id) {
      id
      lastSeq
      lastPts
    }
  }
`)

export const History = graphql(`
  query History($id: ID!, $first: Int, $after: String, $last: Int, $before: String) {
    conversation(id: $id) {
      messages(first: $first, after: $after, last: $last, before: $before) {
        edges {
          cursor
          node {
            seq
          }
        }
        pageInfo {
          hasNextPage
          hasPreviousPage
          startCursor
          endCursor
        }
      }
    }
  }
`)

let counter = 0
/** Sends a text message as `user` and returns the payload. */
export async function sendText(
  user: TestUser,
  conversationId: string,
  text = 'hello',
  clientMessageId = `c-${process.pid}-${++counter}-${Math.random()}`,
) {
  return (await user.run(SendMessage, { input: { conversationId, clientMessageId, content: { text: { text } } } }))
    .sendMessage
}

/** A group owned by `owner` with `members`. */
export async function createGroup(
  owner: TestUser,
  members: TestUser[],
  historyVisibility: 'SHARED' | 'JOINED' = 'SHARED',
  title = 'test group',
) {
  return (await owner.run(CreateGroup, { input: { title, memberIds: members.map((m) => m.id), historyVisibility } }))
    .createGroup
}

export async function lastSeqOf(user: TestUser, conversationId: string): Promise<number> {
  return (await user.run(ConversationState, { id: conversationId })).conversation!.lastSeq
}
