import { graphql } from '../gql/index.ts'

/** Operations of the agents tests: streamed replies, signals, typing status, system messages and cards. */

export const AgentEvents = graphql(`
  subscription AgentEvents($conversationId: ID!) {
    conversationEvents(conversationId: $conversationId) {
      __typename
      ... on MessageEvent {
        kind
        pts
        alert
        message {
          id
          status
          senderType
          content {
            __typename
            ... on TextContent {
              text
            }
            ... on CardContent {
              data
            }
            ... on SystemContent {
              event
              text
              actor {
                id
              }
              targets {
                id
              }
            }
          }
        }
      }
      ... on MessageStreamEvent {
        conversationId
        messageId
        sequence
        delta
        text
      }
      ... on SignalEvent {
        conversationId
        from {
          id
        }
        type
        payload
        sentAt
      }
      ... on TypingEvent {
        user {
          id
        }
        status
      }
    }
  }
`)

export const InboxStreamEvents = graphql(`
  subscription InboxStreamEvents {
    inboxEvents {
      __typename
      ... on MessageStreamEvent {
        messageId
        sequence
        text
      }
      ... on SignalEvent {
        type
      }
    }
  }
`)

export const StartStream = graphql(`
  mutation StartStream($conversationId: ID!, $clientMessageId: String!) {
    startStreamingMessage(conversationId: $conversationId, clientMessageId: $clientMessageId) {
      deduplicated
      message {
        id
        seq
        status
        content {
          ... on TextContent {
            text
          }
        }
      }
    }
  }
`)

export const Append = graphql(`
  mutation Append($messageId: ID!, $sequence: Int!, $delta: String!) {
    appendToStreamingMessage(messageId: $messageId, sequence: $sequence, delta: $delta)
  }
`)

export const Finish = graphql(`
  mutation Finish($messageId: ID!, $text: String) {
    finishStreamingMessage(messageId: $messageId, text: $text) {
      id
      pts
      status
      editedAt
      content {
        ... on TextContent {
          text
        }
      }
    }
  }
`)

export const ReadMessage = graphql(`
  query ReadMessage($id: ID!) {
    node(id: $id) {
      ... on Message {
        status
        pts
        content {
          ... on TextContent {
            text
          }
          ... on CardContent {
            data
          }
        }
      }
    }
  }
`)

export const SendSignal = graphql(`
  mutation SendSignal($conversationId: ID!, $type: String!, $payload: JSON, $toUserIds: [ID!]) {
    sendSignal(conversationId: $conversationId, type: $type, payload: $payload, toUserIds: $toUserIds)
  }
`)

export const TypingStatus = graphql(`
  mutation TypingStatus($conversationId: ID!, $status: String) {
    sendTyping(conversationId: $conversationId, status: $status)
  }
`)

export const PostSystem = graphql(`
  mutation PostSystem($input: SystemMessageInput!) {
    postSystemMessage(input: $input) {
      deduplicated
      message {
        id
        seq
        kind
        senderType
        sender {
          id
        }
        content {
          __typename
          ... on TextContent {
            text
          }
          ... on SystemContent {
            event
            text
            actor {
              id
            }
            targets {
              id
            }
          }
        }
      }
    }
  }
`)

export const Unread = graphql(`
  query Unread($id: ID!) {
    conversation(id: $id) {
      unreadCount
    }
  }
`)

export const SendCard = graphql(`
  mutation SendCard($input: SendMessageInput!) {
    sendMessage(input: $input) {
      message {
        id
        pts
      }
    }
  }
`)

// A fragment for codegen: the operations that spread it carry it in their generated documents.
graphql(`
  fragment CardFields on Message {
    id
    pts
    status
    editedAt
    edits {
      version
    }
    content {
      ... on CardContent {
        cardType
        data
        actions {
          id
          label
          style
          url
        }
        updatedAt
        viewerActionId
      }
    }
  }
`)

export const UpdateCard = graphql(`
  mutation UpdateCard($messageId: ID!, $data: JSON!, $actions: [CardActionInput!]) {
    updateCard(messageId: $messageId, data: $data, actions: $actions) {
      ...CardFields
    }
  }
`)

export const PressCardAction = graphql(`
  mutation PressCardAction($messageId: ID!, $actionId: String!, $value: JSON) {
    pressCardAction(messageId: $messageId, actionId: $actionId, value: $value) {
      ...CardFields
    }
  }
`)

export const ReadCard = graphql(`
  query ReadCard($id: ID!) {
    node(id: $id) {
      ...CardFields
    }
  }
`)

export const CardEvents = graphql(`
  subscription CardEvents($conversationId: ID!) {
    conversationEvents(conversationId: $conversationId) {
      ... on MessageEvent {
        kind
        pts
        message {
          ...CardFields
        }
      }
    }
  }
`)

export const CardChanges = graphql(`
  query CardChanges($id: ID!, $sincePts: SafeInt!) {
    conversation(id: $id) {
      changes(sincePts: $sincePts) {
        messages {
          id
          pts
        }
      }
    }
  }
`)
