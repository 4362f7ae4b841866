import { graphql } from './gql/index.ts'

/** Every change the workbench makes. */

export const Send = graphql(`
  mutation Send($input: SendMessageInput!) {
    sendMessage(input: $input) {
      edge {
        cursor
        node {
          ...Bubble
          conversation {
            id
            lastActivityAt
            lastMessage {
              ...Preview
              sentAt
            }
            viewerSettings {
              draft {
                text
                updatedAt
              }
            }
          }
        }
      }
    }
  }
`)

export const MarkRead = graphql(`
  mutation MarkRead($id: ID!) {
    markConversationRead(conversationId: $id) {
      id
      lastReadSeq
      conversation {
        id
        unreadCount
        mentionedUnreadCount
        viewerSettings {
          markedUnread
        }
      }
    }
  }
`)

export const Recall = graphql(`
  mutation Recall($id: ID!) {
    recallMessage(messageId: $id) {
      ...Bubble
    }
  }
`)

export const Pin = graphql(`
  mutation Pin($id: ID!) {
    pinMessage(messageId: $id) {
      id
      pinnedMessages {
        pinnedAt
        message {
          ...Preview
        }
      }
    }
  }
`)

export const SaveDraft = graphql(`
  mutation SaveDraft($id: ID!, $draft: DraftInput) {
    saveDraft(conversationId: $id, draft: $draft) {
      id
      viewerSettings {
        draft {
          text
          updatedAt
        }
      }
    }
  }
`)

export const SetDoNotDisturb = graphql(`
  mutation SetDoNotDisturb($id: ID!, $until: DateTime) {
    updateConversationSettings(conversationId: $id, input: { doNotDisturbUntil: $until }) {
      id
      viewerSettings {
        doNotDisturb
        doNotDisturbUntil
      }
    }
  }
`)

export const CreateUpload = graphql(`
  mutation CreateUpload($input: CreateUploadInput!) {
    createUpload(input: $input) {
      uploadId
      url
      method
      headers
    }
  }
`)

export const CompleteUpload = graphql(`
  mutation CompleteUpload($id: ID!) {
    completeUpload(uploadId: $id) {
      id
    }
  }
`)

export const SendTyping = graphql(`
  mutation SendTyping($id: ID!) {
    sendTyping(conversationId: $id)
  }
`)
