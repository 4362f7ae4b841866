import { graphql } from './gql/index.ts'

/** The fragments and queries of the workbench, typed by graphql-codegen's client preset (web/codegen.ts). */

graphql(`
  fragment Preview on Message {
    id
    seq
    status
    sender {
      id
      displayName
    }
    content {
      __typename
      ... on TextContent {
        text
      }
      ... on SystemContent {
        text
      }
      ... on FileContent {
        name
      }
      ... on StickerContent {
        label
      }
      ... on ForwardContent {
        title
      }
      ... on CardContent {
        cardType
      }
      ... on MaterialContent {
        title
      }
    }
  }
`)

graphql(`
  fragment ConversationItem on Conversation {
    id
    type
    title
    lastActivityAt
    unreadCount
    mentionedUnreadCount
    peer {
      id
      displayName
      handle
    }
    lastMessage {
      ...Preview
      sentAt
    }
    viewerSettings {
      doNotDisturb
      pinnedAt
      archived
      markedUnread
      draft {
        text
        updatedAt
      }
    }
  }
`)

graphql(`
  fragment Bubble on Message {
    ...Preview
    ...BubbleMore
    kind
    sentAt
    recalledAt
    mentionsViewer
    sender {
      id
      displayName
      handle
    }
    receipt {
      readByPeer
      readCount
      unreadCount
    }
    quoted {
      ...Preview
    }
    content {
      __typename
      ... on TextContent {
        mentionRanges {
          start
          length
          all
        }
      }
      ... on ImageContent {
        url
        thumbnailUrl
        width
        height
      }
      ... on FileContent {
        url
        sizeBytes
        mimeType
      }
      ... on StickerContent {
        url
      }
      ... on AudioContent {
        url
        durationMs
      }
      ... on VideoContent {
        url
        coverUrl
      }
      ... on CardContent {
        data
      }
      ... on MaterialContent {
        url
        digest
      }
      ... on ForwardContent {
        items {
          senderName
          sentAt
          content {
            __typename
            ... on TextContent {
              text
            }
          }
        }
      }
    }
  }
`)

export const Me = graphql(`
  query Me {
    viewer {
      id
      user {
        id
        handle
        displayName
      }
    }
  }
`)

export const Inbox = graphql(`
  query Inbox($after: String) {
    viewer {
      id
      conversations(first: 50, after: $after) {
        edges {
          cursor
          node {
            ...ConversationItem
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

export const Chat = graphql(`
  query Chat($id: ID!, $before: String) {
    conversation(id: $id) {
      id
      type
      title
      peer {
        id
        displayName
      }
      viewerMember {
        id
        role
        lastReadSeq
      }
      pinnedMessages {
        pinnedAt
        message {
          ...Preview
        }
      }
      viewerSettings {
        doNotDisturb
        draft {
          text
        }
      }
      messages(last: 30, before: $before) {
        edges {
          cursor
          node {
            ...Bubble
          }
        }
        pageInfo {
          hasPreviousPage
          startCursor
        }
      }
    }
  }
`)

export const ReadersOf = graphql(`
  query ReadersOf($id: ID!) {
    node(id: $id) {
      __typename
      ... on Message {
        id
        receipt {
          readers(first: 50) {
            edges {
              node {
                id
                displayName
              }
            }
          }
        }
      }
    }
  }
`)

export const MemberSearch = graphql(`
  query MemberSearch($id: ID!, $query: String!) {
    conversation(id: $id) {
      id
      memberSearch(query: $query, first: 8) {
        id
        user {
          id
          handle
          displayName
        }
      }
    }
  }
`)

// --- h4b: search, jump to a message, archived conversations ---

export const SearchMessages = graphql(`
  query SearchMessages($query: String!) {
    searchMessages(query: $query, first: 20) {
      edges {
        cursor
        snippet
        highlights {
          start
          length
        }
        node {
          id
          seq
          sentAt
          sender {
            id
            displayName
          }
          conversation {
            id
            title
            peer {
              id
              displayName
            }
          }
        }
      }
    }
  }
`)

export const ChatAround = graphql(`
  query ChatAround($id: ID!, $seq: SafeInt!, $count: Int!) {
    conversation(id: $id) {
      id
      messagesAround(seq: $seq, count: $count) {
        edges {
          cursor
          node {
            ...Bubble
          }
        }
        pageInfo {
          hasPreviousPage
          hasNextPage
        }
      }
    }
  }
`)

export const ArchivedInbox = graphql(`
  query ArchivedInbox {
    viewer {
      id
      conversations(first: 50, archived: true) {
        edges {
          cursor
          node {
            ...ConversationItem
          }
        }
      }
    }
  }
`)
