import { graphql } from '../gql/index.ts'

/** The operations a chat screen sends, shared by the Apollo and urql tests (as a client app writes them). */

export const ChatScreen = graphql(`
  query ClientChatScreen($id: ID!, $count: Int!, $before: String) {
    conversation(id: $id) {
      id
      title
      unreadCount
      viewerMember {
        id
        lastReadSeq
      }
      messages(last: $count, before: $before) {
        edges {
          cursor
          node {
            id
            seq
            status
            sentAt
            sender {
              id
              displayName
            }
            content {
              ... on TextContent {
                text
              }
              ... on SystemContent {
                event
                text
              }
              ... on StickerContent {
                url
                label
              }
              ... on FileContent {
                name
                sizeBytes
              }
            }
          }
        }
        pageInfo {
          hasPreviousPage
          startCursor
          endCursor
        }
      }
    }
  }
`)

export const ClientMarkRead = graphql(`
  mutation ClientMarkRead($id: ID!) {
    markConversationRead(conversationId: $id) {
      id
      lastReadSeq
      conversation {
        id
        unreadCount
      }
    }
  }
`)

export const ClientEdit = graphql(`
  mutation ClientEdit($id: ID!, $text: String!) {
    editMessage(messageId: $id, content: { text: { text: $text } }) {
      id
      status
      content {
        ... on TextContent {
          text
        }
      }
    }
  }
`)

export const ClientRecall = graphql(`
  mutation ClientRecall($id: ID!) {
    recallMessage(messageId: $id) {
      id
      status
      content {
        ... on TextContent {
          text
        }
      }
    }
  }
`)

export const ClientSend = graphql(`
  mutation ClientSend($input: SendMessageInput!) {
    sendMessage(input: $input) {
      edge {
        cursor
        node {
          id
          seq
          status
          sentAt
          sender {
            id
            displayName
          }
          content {
            ... on TextContent {
              text
            }
            ... on SystemContent {
              event
              text
            }
            ... on StickerContent {
              url
              label
            }
            ... on FileContent {
              name
              sizeBytes
            }
          }
        }
      }
    }
  }
`)

export const ClientEvents = graphql(`
  subscription ClientEvents($id: ID!, $sincePts: SafeInt) {
    conversationEvents(conversationId: $id, sincePts: $sincePts) {
      ... on MessageEvent {
        kind
        cursor
        message {
          id
          seq
          status
          sentAt
          sender {
            id
            displayName
          }
          content {
            ... on TextContent {
              text
            }
            ... on SystemContent {
              event
              text
            }
            ... on StickerContent {
              url
              label
            }
            ... on FileContent {
              name
              sizeBytes
            }
          }
        }
      }
    }
  }
`)
