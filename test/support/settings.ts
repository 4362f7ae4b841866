import { graphql } from '../gql/index.ts'

/** Operations on the viewer's own state of a conversation: settings, drafts, the list they order. */

// A fragment for codegen: the operations that spread it carry it in their generated documents.
graphql(`
  fragment SettingsFields on ConversationSettings {
    doNotDisturbUntil
    doNotDisturb
    pinnedAt
    archived
    markedUnread
    draft {
      text
      quotedMessage {
        id
      }
      mentions {
        id
      }
      mentionRanges {
        start
        length
        all
        user {
          id
        }
      }
      updatedAt
    }
  }
`)

export const UpdateSettings = graphql(`
  mutation UpdateSettings($id: ID!, $input: ConversationSettingsInput!) {
    updateConversationSettings(conversationId: $id, input: $input) {
      id
      viewerSettings {
        ...SettingsFields
      }
    }
  }
`)

export const SaveDraft = graphql(`
  mutation SaveDraft($id: ID!, $draft: DraftInput) {
    saveDraft(conversationId: $id, draft: $draft) {
      id
      viewerSettings {
        ...SettingsFields
      }
    }
  }
`)

export const ViewerSettings = graphql(`
  query ViewerSettings($id: ID!) {
    conversation(id: $id) {
      id
      unreadCount
      viewerSettings {
        ...SettingsFields
      }
    }
  }
`)

export const ConversationList = graphql(`
  query ConversationList($first: Int, $after: String, $archived: Boolean) {
    viewer {
      conversations(first: $first, after: $after, archived: $archived) {
        edges {
          cursor
          node {
            id
            viewerSettings {
              pinnedAt
              archived
            }
          }
        }
        pageInfo {
          hasNextPage
          hasPreviousPage
          endCursor
        }
      }
    }
  }
`)

export const InboxWithSettings = graphql(`
  query InboxWithSettings($first: Int) {
    viewer {
      unreadTotal
      conversations(first: $first) {
        edges {
          node {
            id
            unreadCount
            lastMessage {
              seq
            }
            viewerSettings {
              ...SettingsFields
            }
          }
        }
      }
    }
  }
`)

export const SettingsEvents = graphql(`
  subscription SettingsInboxEvents {
    inboxEvents {
      __typename
      ... on MessageEvent {
        kind
        alert
        message {
          id
          seq
        }
      }
      ... on ConversationUpdatedEvent {
        conversation {
          id
          viewerSettings {
            ...SettingsFields
          }
        }
      }
    }
  }
`)

export const AlertEvents = graphql(`
  subscription AlertConversationEvents($conversationId: ID!, $sincePts: SafeInt) {
    conversationEvents(conversationId: $conversationId, sincePts: $sincePts) {
      __typename
      ... on MessageEvent {
        kind
        alert
        pts
        message {
          id
          seq
          senderType
        }
      }
    }
  }
`)
