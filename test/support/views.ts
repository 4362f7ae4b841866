import { graphql } from '../gql/index.ts'

/** Queries shaped for one test file each (conversations, history, content, access, the client shape, the operator view). */

export const NodeById = graphql(`
  query NodeById($id: ID!) {
    node(id: $id) {
      id
      __typename
      ... on Message {
        seq
      }
      ... on Conversation {
        lastSeq
      }
      ... on User {
        handle
      }
    }
  }
`)

export const AdminMessages = graphql(`
  query AdminMessages($filter: AdminMessageFilter!, $first: Int, $after: String) {
    adminMessages(filter: $filter, first: $first, after: $after) {
      edges {
        cursor
        node {
          id
          seq
          kind
          senderType
          sentAt
          sender {
            id
          }
          content {
            ... on TextContent {
              text
            }
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
`)

export const EveryContentKind = graphql(`
  query EveryContentKind($id: ID!) {
    conversation(id: $id) {
      messages(last: 20) {
        edges {
          node {
            seq
            content {
              __typename
              ... on TextContent {
                text
              }
              ... on ImageContent {
                url
                sizeBytes
              }
              ... on AudioContent {
                url
                sizeBytes
              }
              ... on VideoContent {
                url
                sizeBytes
              }
              ... on FileContent {
                url
                name
                sizeBytes
              }
              ... on StickerContent {
                url
                label
              }
              ... on CardContent {
                cardType
              }
              ... on MaterialContent {
                title
                url
              }
              ... on ForwardContent {
                title
                items {
                  content {
                    __typename
                    ... on TextContent {
                      text
                    }
                    ... on SystemContent {
                      text
                    }
                  }
                }
              }
              ... on SystemContent {
                event
                text
              }
            }
          }
        }
      }
    }
  }
`)

export const ShapeViewer = graphql(`
  query ShapeViewer {
    viewer {
      id
      user {
        id
      }
    }
  }
`)

export const ShapeMemberNode = graphql(`
  query ShapeMemberNode($id: ID!) {
    node(id: $id) {
      __typename
      id
      ... on ConversationMember {
        user {
          id
        }
        conversation {
          id
        }
        lastReadSeq
      }
    }
  }
`)

export const ShapeViewerMember = graphql(`
  query ShapeViewerMember($id: ID!) {
    conversation(id: $id) {
      viewerMember {
        id
      }
      members(first: 10) {
        edges {
          node {
            id
            user {
              id
            }
          }
        }
      }
    }
  }
`)

export const ShapeSendWithEdge = graphql(`
  mutation ShapeSendWithEdge($input: SendMessageInput!) {
    sendMessage(input: $input) {
      message {
        id
        seq
      }
      edge {
        cursor
        node {
          id
          seq
        }
      }
    }
  }
`)

export const ShapeNewestCursor = graphql(`
  query ShapeNewestCursor($id: ID!) {
    conversation(id: $id) {
      messages(last: 1) {
        edges {
          cursor
          node {
            id
          }
        }
      }
    }
  }
`)

export const ShapeOperatorView = graphql(`
  query ShapeOperatorView($filter: AdminMessageFilter!) {
    adminMessages(filter: $filter, first: 5) {
      edges {
        node {
          seq
          conversation {
            id
            type
            title
            lastSeq
            unreadCount
            peer {
              id
            }
            members(first: 5) {
              edges {
                node {
                  user {
                    id
                  }
                }
              }
            }
          }
        }
      }
    }
  }
`)

export const ShapeOperatorViewerMember = graphql(`
  query ShapeOperatorViewerMember($filter: AdminMessageFilter!) {
    adminMessages(filter: $filter, first: 1) {
      edges {
        node {
          conversation {
            viewerMember {
              role
            }
          }
        }
      }
    }
  }
`)

export const SendContent = graphql(`
  mutation SendContent($input: SendMessageInput!) {
    sendMessage(input: $input) {
      message {
        id
        seq
        kind
        content {
          ...AnyContent
          ... on ForwardContent {
            title
            items {
              senderName
              kind
              sentAt
              content {
                ...AnyContent
              }
            }
          }
        }
      }
    }
  }
  fragment AnyContent on MessageContent {
    __typename
    ... on TextContent {
      text
    }
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
      fileSizeBytes: sizeBytes
      mimeType
    }
    ... on StickerContent {
      stickerId
      url
      label
    }
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
  }
`)

export const ReadContent = graphql(`
  query ReadContent($id: ID!, $seq: SafeInt!) {
    conversation(id: $id) {
      message(seq: $seq) {
        kind
        content {
          ...AnyContent
          ... on ForwardContent {
            title
            items {
              senderName
              kind
              content {
                ...AnyContent
              }
            }
          }
        }
      }
    }
  }
`)

export const Members = graphql(`
  query Members($id: ID!, $first: Int, $after: String) {
    conversation(id: $id) {
      members(first: $first, after: $after) {
        edges {
          node {
            role
            user {
              id
            }
          }
        }
        pageInfo {
          hasNextPage
          endCursor
        }
      }
    }
  }
`)

export const MemberPositions = graphql(`
  query MemberPositions($id: ID!) {
    conversation(id: $id) {
      members(first: 10) {
        edges {
          node {
            lastReadSeq
            user {
              id
            }
          }
        }
      }
    }
  }
`)

export const SystemMessages = graphql(`
  query SystemMessages($id: ID!) {
    conversation(id: $id) {
      messages(last: 20) {
        edges {
          node {
            seq
            senderType
            sender {
              id
            }
            kind
            content {
              ... on SystemContent {
                event
                actor {
                  id
                }
                targets {
                  id
                }
                text
              }
            }
          }
        }
      }
    }
  }
`)

export const Around = graphql(`
  query Around($id: ID!, $seq: SafeInt!, $count: Int) {
    conversation(id: $id) {
      messagesAround(seq: $seq, count: $count) {
        edges {
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

export const OneMessage = graphql(`
  query OneMessage($id: ID!, $seq: SafeInt!) {
    conversation(id: $id) {
      message(seq: $seq) {
        seq
        content {
          ... on TextContent {
            text
          }
        }
      }
    }
  }
`)

export const LifecycleSystemMessage = graphql(`
  query LifecycleSystemMessage($id: ID!) {
    conversation(id: $id) {
      message(seq: 1) {
        id
        senderType
      }
    }
  }
`)

export const RulesLatest = graphql(`
  query RulesLatest($id: ID!) {
    conversation(id: $id) {
      lastSeq
      viewerMember {
        mutedUntil
      }
      lastMessage {
        seq
        senderType
        sender {
          id
        }
        kind
        mentionsAll
        mentionsViewer
        mentions {
          id
        }
        content {
          ... on SystemContent {
            event
            actor {
              id
            }
            targets {
              id
            }
            text
          }
        }
        quoted {
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
  }
`)

export const VisOverview = graphql(`
  query VisOverview($id: ID!) {
    conversation(id: $id) {
      newest: messages {
        edges {
          node {
            seq
          }
        }
        pageInfo {
          hasNextPage
          hasPreviousPage
        }
      }
      oldest: messages(first: 100) {
        edges {
          node {
            seq
          }
        }
        pageInfo {
          hasNextPage
          hasPreviousPage
        }
      }
      lastMessage {
        seq
      }
      changes(sincePts: 0) {
        messages {
          seq
        }
      }
    }
  }
`)
