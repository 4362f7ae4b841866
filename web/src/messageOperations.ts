import { graphql } from './gql/index.ts'

/**
 * The message side of the workbench: what a bubble shows beyond its content (spread into Bubble in
 * operations.ts), a thread's replies, and reactions, card buttons, stickers and thread changes.
 */

/** Reactions, the thread, a card's buttons and a forward's items. */
graphql(`
  fragment BubbleMore on Message {
    inConversation
    reactions {
      emoji
      count
      viewerReacted
    }
    thread {
      ...ThreadCount
    }
    threadRoot {
      id
      thread {
        ...ThreadCount
      }
    }
    content {
      __typename
      ... on CardContent {
        viewerActionId
        actions {
          id
          label
          style
          url
        }
      }
      ... on ForwardContent {
        items {
          kind
          content {
            __typename
            ... on SystemContent {
              text
            }
            ... on ImageContent {
              thumbnailUrl
            }
            ... on StickerContent {
              url
              label
            }
            ... on FileContent {
              name
            }
          }
        }
      }
    }
  }
`)

graphql(`
  fragment ThreadCount on ThreadSummary {
    replyCount
    viewerFollowing
    viewerUnreadCount
  }
`)

/** A thread: its root and its newest replies (Message.replies). */
export const ThreadReplies = graphql(`
  query ThreadReplies($id: ID!) {
    node(id: $id) {
      __typename
      ... on Message {
        ...Bubble
        conversation {
          id
          type
        }
        replies(last: 50) {
          edges {
            cursor
            node {
              ...Bubble
            }
          }
        }
      }
    }
  }
`)

export const AddReaction = graphql(`
  mutation AddReaction($id: ID!, $emoji: String!) {
    addReaction(messageId: $id, emoji: $emoji) {
      id
      reactions {
        emoji
        count
        viewerReacted
      }
    }
  }
`)

export const RemoveReaction = graphql(`
  mutation RemoveReaction($id: ID!, $emoji: String!) {
    removeReaction(messageId: $id, emoji: $emoji) {
      id
      reactions {
        emoji
        count
        viewerReacted
      }
    }
  }
`)

export const PressCardAction = graphql(`
  mutation PressCardAction($id: ID!, $actionId: String!) {
    pressCardAction(messageId: $id, actionId: $actionId) {
      id
      content {
        __typename
        ... on CardContent {
          viewerActionId
        }
      }
    }
  }
`)

export const SaveSticker = graphql(`
  mutation SaveSticker($id: ID!) {
    saveSticker(messageId: $id) {
      id
      label
    }
  }
`)

export const FollowThread = graphql(`
  mutation FollowThread($id: ID!, $follow: Boolean!) {
    followThread(messageId: $id, follow: $follow) {
      id
      thread {
        ...ThreadCount
      }
    }
  }
`)

export const MarkThreadRead = graphql(`
  mutation MarkThreadRead($id: ID!, $seq: SafeInt) {
    markThreadRead(messageId: $id, seq: $seq) {
      id
      thread {
        ...ThreadCount
      }
    }
  }
`)
