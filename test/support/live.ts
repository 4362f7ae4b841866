import { graphql } from '../gql/index.ts'

/** Operations shared by the live delivery tests (subscriptions, resume, SSE, several instances). */

export const ConversationEvents = graphql(`
  subscription LiveConversationEvents($conversationId: ID!, $sincePts: SafeInt) {
    conversationEvents(conversationId: $conversationId, sincePts: $sincePts) {
      __typename
      ... on MessageEvent {
        kind
        pts
        message {
          id
          seq
          pts
          status
          sender {
            id
            handle
          }
          conversation {
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
      ... on ReadEvent {
        conversationId
        user {
          id
        }
        lastReadSeq
      }
      ... on TypingEvent {
        conversationId
        user {
          id
        }
        expiresAt
      }
    }
  }
`)

export const ConversationEventBatches = graphql(`
  subscription LiveConversationEventBatches($conversationId: ID!, $sincePts: SafeInt) {
    conversationEventBatches(conversationId: $conversationId, sincePts: $sincePts) {
      events {
        __typename
        ... on MessageEvent {
          kind
          pts
          message {
            id
          }
        }
      }
    }
  }
`)

export const InboxEvents = graphql(`
  subscription LiveInboxEvents {
    inboxEvents {
      __typename
      ... on MessageEvent {
        kind
        pts
        message {
          id
          seq
          conversation {
            id
          }
          content {
            ... on TextContent {
              text
            }
          }
        }
      }
      ... on ReadEvent {
        conversationId
        user {
          id
        }
        lastReadSeq
      }
      ... on TypingEvent {
        conversationId
        user {
          id
        }
      }
      ... on ConversationJoinedEvent {
        conversation {
          id
          title
          viewerMember {
            role
          }
        }
      }
      ... on MessageActionEvent {
        messageId
        deletedForMe
        favorite
        remindAt
      }
      ... on ReminderDueEvent {
        message {
          id
        }
        dueAt: remindAt
      }
    }
  }
`)

export const SendTyping = graphql(`
  mutation LiveSendTyping($id: ID!) {
    sendTyping(conversationId: $id)
  }
`)

export const Position = graphql(`
  query LivePosition($id: ID!) {
    conversation(id: $id) {
      lastSeq
      lastPts
    }
  }
`)

/** The text of a MessageEvent (null once recalled). */
export const textOf = (event: { message?: { content?: { text?: string } | null } }) =>
  event.message?.content?.text ?? null

export const EventCursors = graphql(`
  subscription ShapeEventCursors($conversationId: ID!, $sincePts: SafeInt) {
    conversationEvents(conversationId: $conversationId, sincePts: $sincePts) {
      ... on MessageEvent {
        kind
        cursor
        message {
          id
        }
      }
    }
  }
`)

export const RenamedConversationEvents = graphql(`
  subscription RenamedConversationEvents($conversation: ID!) {
    conversationEvents(conversationId: $conversation, sincePts: 0) {
      ... on MessageEvent {
        message {
          content {
            ... on TextContent {
              text
            }
          }
        }
      }
    }
  }
`)
