import { graphql } from '../gql/index.ts'

/** Operations of the message interaction tests (issue 16): pins, reactions, copies, saved stickers. */

export const PinMessage = graphql(`
  mutation PinMessage($messageId: ID!) {
    pinMessage(messageId: $messageId) {
      id
      lastSeq
      lastPts
      pinnedMessages {
        message {
          id
          seq
        }
        pinnedBy {
          id
        }
        pinnedAt
      }
    }
  }
`)

export const UnpinMessage = graphql(`
  mutation UnpinMessage($messageId: ID!) {
    unpinMessage(messageId: $messageId) {
      id
      lastSeq
      lastPts
      pinnedMessages {
        message {
          id
          seq
        }
        pinnedBy {
          id
        }
        pinnedAt
      }
    }
  }
`)

export const PinnedState = graphql(`
  query PinnedState($id: ID!) {
    conversation(id: $id) {
      lastSeq
      lastPts
      pinnedMessages {
        message {
          id
          seq
        }
        pinnedBy {
          id
        }
      }
      lastMessage {
        seq
        senderType
        content {
          ... on SystemContent {
            event
            actor {
              id
            }
            text
          }
        }
      }
    }
  }
`)

// A fragment for codegen: the operations that spread it carry it in their generated documents.
graphql(`
  fragment MessageReactions on Message {
    id
    seq
    pts
    reactions {
      emoji
      count
      viewerReacted
      firstReactedAt
    }
  }
`)

export const AddReaction = graphql(`
  mutation AddReaction($messageId: ID!, $emoji: String!) {
    addReaction(messageId: $messageId, emoji: $emoji) {
      ...MessageReactions
    }
  }
`)

export const RemoveReaction = graphql(`
  mutation RemoveReaction($messageId: ID!, $emoji: String!) {
    removeReaction(messageId: $messageId, emoji: $emoji) {
      ...MessageReactions
    }
  }
`)

export const ReactionState = graphql(`
  query ReactionState($id: ID!, $seq: SafeInt!, $first: Int, $after: String) {
    conversation(id: $id) {
      lastSeq
      lastPts
      message(seq: $seq) {
        ...MessageReactions
        reactions {
          emoji
          users(first: $first, after: $after) {
            edges {
              node {
                id
              }
            }
            pageInfo {
              hasNextPage
              endCursor
            }
          }
        }
      }
    }
  }
`)

export const HistoryWithInteractions = graphql(`
  query HistoryWithInteractions($id: ID!, $last: Int) {
    conversation(id: $id) {
      pinnedMessages {
        pinnedAt
        pinnedBy {
          id
        }
        message {
          seq
          sender {
            id
          }
          reactions {
            emoji
            count
            viewerReacted
          }
        }
      }
      messages(last: $last) {
        edges {
          node {
            seq
            sender {
              id
            }
            reactions {
              emoji
              count
              viewerReacted
              firstReactedAt
              users(first: 3) {
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
    }
  }
`)

// A fragment for codegen: the operations that spread it carry it in their generated documents.
graphql(`
  fragment CopiedMessage on Message {
    id
    seq
    kind
    content {
      __typename
      ... on TextContent {
        text
      }
      ... on ImageContent {
        url
        width
      }
      ... on ForwardContent {
        title
        items {
          senderName
        }
      }
      ... on StickerContent {
        stickerId
        url
        label
      }
    }
    forwardedFrom {
      senderName
      sentAt
      conversationTitle
    }
  }
`)

export const SendCopy = graphql(`
  mutation SendCopy($conversationId: ID!, $clientMessageId: String!, $messageId: ID!) {
    sendMessage(
      input: {
        conversationId: $conversationId
        clientMessageId: $clientMessageId
        content: { copy: { messageId: $messageId } }
      }
    ) {
      message {
        ...CopiedMessage
      }
    }
  }
`)

export const CopiedBySeq = graphql(`
  query CopiedBySeq($id: ID!, $seq: SafeInt!) {
    conversation(id: $id) {
      lastSeq
      lastPts
      message(seq: $seq) {
        ...CopiedMessage
      }
    }
  }
`)

export const SaveSticker = graphql(`
  mutation SaveSticker($messageId: ID!) {
    saveSticker(messageId: $messageId) {
      id
      url
      label
      savedAt
    }
  }
`)

export const RemoveSticker = graphql(`
  mutation RemoveSticker($id: ID!) {
    removeSticker(id: $id)
  }
`)

export const Stickers = graphql(`
  query Stickers($first: Int, $after: String) {
    viewer {
      stickers(first: $first, after: $after) {
        edges {
          cursor
          node {
            id
            url
            label
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

export const StickerNode = graphql(`
  query StickerNode($id: ID!) {
    node(id: $id) {
      id
      ... on SavedSticker {
        url
      }
    }
  }
`)
