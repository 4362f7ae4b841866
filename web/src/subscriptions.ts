import { graphql } from './gql/index.ts'

/** The live streams: one conversation's events, and the account's inbox. */

export const ConversationEvents = graphql(`
  subscription ConversationEvents($id: ID!) {
    conversationEvents(conversationId: $id) {
      __typename
      ... on MessageEvent {
        kind
        cursor
        message {
          ...Bubble
        }
      }
      ...StreamDelta
      ... on ReadEvent {
        conversationId
        lastReadSeq
        user {
          id
        }
      }
      ... on TypingEvent {
        conversationId
        expiresAt
        user {
          id
          displayName
        }
      }
    }
  }
`)

export const InboxEvents = graphql(`
  subscription InboxEvents {
    inboxEvents {
      __typename
      ... on MessageEvent {
        kind
        alert
        cursor
        message {
          ...Bubble
          conversation {
            ...ConversationItem
          }
        }
      }
      ... on ConversationUpdatedEvent {
        conversation {
          ...ConversationItem
        }
      }
      ... on ConversationJoinedEvent {
        conversation {
          ...ConversationItem
        }
      }
    }
  }
`)

// --- Message side of the workbench: h4a ---

/** A streamed reply's text so far (selected by ConversationEvents; written into the message by web/src/messageCache.ts). */
graphql(`
  fragment StreamDelta on MessageStreamEvent {
    messageId
    sequence
    text
  }
`)
