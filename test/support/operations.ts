import { graphql } from '../gql/index.ts'
import type { TestUser } from './harness.ts'

/** Operations shared by many test files. */

export const OpenPrivate = graphql(`
  mutation OpenPrivate($userId: ID!) {
    openPrivateConversation(userId: $userId) { id type lastSeq peer { id } }
  }
`)

export const CreateGroup = graphql(`
  mutation CreateGroup($input: CreateGroupInput!) {
    createGroup(input: $input) { id type title historyVisibility lastSeq lastPts viewerMember { role } }
  }
`)

export const SendMessage = graphql(`
  mutation SendMessage($input: SendMessageInput!) {
    sendMessage(input: $input) {
      deduplicated
      message {
        id seq pts kind senderType clientMessageId status sentAt
        sender { id }
        content { __typename ... on TextContent { text } }
      }
    }
  }
`)

export const ConversationState = graphql(`
  query ConversationState($id: ID!) {
    conversation(id: $id) { id lastSeq lastPts }
  }
`)

export const History = graphql(`
  query History($id: ID!, $first: Int, $after: String, $last: Int, $before: String) {
    conversation(id: $id) {
      messages(first: $first, after: $after, last: $last, before: $before) {
        edges { cursor node { seq } }
        pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
      }
    }
  }
`)

let counter = 0
/** Sends a text message as `user` and returns the payload. */
export async function sendText(user: TestUser, conversationId: string, text = 'hello', clientMessageId = `c-${process.pid}-${++counter}-${Math.random()}`) {
  return (await user.run(SendMessage, { input: { conversationId, clientMessageId, content: { text: { text } } } })).sendMessage
}

/** A group owned by `owner` with `members`. */
export async function createGroup(owner: TestUser, members: TestUser[], historyVisibility: 'SHARED' | 'JOINED' = 'SHARED', title = 'test group') {
  return (await owner.run(CreateGroup, { input: { title, memberIds: members.map((m) => m.id), historyVisibility } })).createGroup
}

export async function lastSeqOf(user: TestUser, conversationId: string): Promise<number> {
  return (await user.run(ConversationState, { id: conversationId })).conversation!.lastSeq
}
