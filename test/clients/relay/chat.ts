import { graphql } from 'relay-runtime'

/**
 * A chat app's screens as Relay writes them: literal page sizes, a fragment per component and per
 * content kind, @connection for pages, @appendEdge for a sent message. relay-compiler compiles this
 * file against schema.graphql in test/clients/relay.test.ts, which then runs the compiled operations.
 */

export const textContent = graphql`
  fragment chatTextContent on TextContent {
    text
  }
`
export const mediaContent = graphql`
  fragment chatMediaContent on MessageContent {
    ... on ImageContent {
      url
      width
      height
      sizeBytes
      thumbnailUrl
    }
    ... on AudioContent {
      url
      durationMs
      sizeBytes
    }
    ... on VideoContent {
      url
      durationMs
      width
      height
      coverUrl
      sizeBytes
    }
    ... on FileContent {
      url
      name
      sizeBytes
      mimeType
    }
    ... on StickerContent {
      stickerId
      url
      label
    }
  }
`
export const messageContent = graphql`
  fragment chatMessageContent on MessageContent {
    __typename
    ...chatTextContent @alias
    ...chatMediaContent
    ... on CardContent {
      cardType
      data
    }
    ... on MaterialContent {
      title
      coverUrl
      digest
      url
    }
    ... on SystemContent {
      event
      text
      actor {
        id
        displayName
      }
      targets {
        id
        displayName
      }
    }
    ... on ForwardContent {
      title
      items {
        senderName
        kind
        sentAt
        content {
          __typename
          ...chatTextContent @alias
          ...chatMediaContent
        }
      }
    }
  }
`
export const messageBubble = graphql`
  fragment chatMessageBubble on Message {
    id
    seq
    pts
    status
    kind
    sentAt
    editedAt
    mentionsViewer
    sender {
      id
      handle
      displayName
      kind
    }
    content {
      ...chatMessageContent
    }
    quoted {
      id
      seq
      sender {
        id
        displayName
      }
      content {
        ...chatMessageContent
      }
    }
    viewerState {
      favorite
      remindAt
    }
    receipt {
      readByPeer
      readCount
      unreadCount
    }
  }
`
export const chatScreen = graphql`
  query chatScreenQuery($id: ID!) {
    conversation(id: $id) {
      id
      title
      type
      unreadCount
      viewerMember {
        id
        lastReadSeq
      }
      messages(last: 100) @connection(key: "chatScreen_messages") {
        edges {
          node {
            ...chatMessageBubble
          }
        }
      }
    }
  }
`
export const inbox = graphql`
  query chatInboxQuery {
    viewer {
      id
      unreadTotal
      conversations(first: 50) @connection(key: "chatInbox_conversations") {
        edges {
          node {
            id
            title
            type
            unreadCount
            mentionedUnreadCount
            lastActivityAt
            peer {
              id
              displayName
            }
            lastMessage {
              ...chatMessageBubble
            }
            members(first: 5) {
              edges {
                node {
                  id
                  role
                  user {
                    id
                    displayName
                  }
                }
              }
            }
          }
        }
      }
    }
  }
`
export const send = graphql`
  mutation chatSendMutation($input: SendMessageInput!, $connections: [ID!]!) {
    sendMessage(input: $input) {
      deduplicated
      edge @appendEdge(connections: $connections) {
        cursor
        node {
          ...chatMessageBubble
        }
      }
    }
  }
`
export const markRead = graphql`
  mutation chatMarkReadMutation($id: ID!) {
    markConversationRead(conversationId: $id) {
      id
      lastReadSeq
      conversation {
        id
        unreadCount
      }
    }
  }
`
export const events = graphql`
  subscription chatEventsSubscription($id: ID!, $sincePts: SafeInt) {
    conversationEvents(conversationId: $id, sincePts: $sincePts) {
      ... on MessageEvent {
        kind
        pts
        cursor
        message {
          ...chatMessageBubble
        }
      }
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
        }
      }
    }
  }
`
