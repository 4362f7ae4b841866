import { graphql } from '../gql/index.ts'
import type { TestUser } from './harness.ts'

/** Operations of test/threads: replies, summaries, following, thread reads, Viewer.threads. */

export const SendReply = graphql(`
  mutation ThreadSendReply($input: SendMessageInput!) {
    sendMessage(input: $input) {
      message {
        id
        seq
        pts
        inConversation
        threadRoot {
          id
          seq
        }
      }
    }
  }
`)

graphql(`
  fragment ThreadSummaryFields on ThreadSummary {
    replyCount
    lastReplyAt
    participants {
      id
    }
    viewerFollowing
    viewerUnreadCount
    viewerLastReadSeq
  }
`)

export const ThreadOf = graphql(`
  query ThreadOf($id: ID!, $seq: SafeInt!, $first: Int, $after: String, $last: Int, $before: String) {
    conversation(id: $id) {
      message(seq: $seq) {
        id
        seq
        inConversation
        thread {
          ...ThreadSummaryFields
        }
        replies(first: $first, after: $after, last: $last, before: $before) {
          edges {
            cursor
            node {
              seq
              status
              inConversation
              threadRoot {
                seq
              }
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
  }
`)

export const ThreadMainViews = graphql(`
  query ThreadMainViews($id: ID!, $around: SafeInt!) {
    conversation(id: $id) {
      unreadCount
      mentionedUnreadCount
      lastMessage {
        seq
      }
      messages(last: 100) {
        edges {
          node {
            seq
            thread {
              replyCount
            }
          }
        }
      }
      messagesAround(seq: $around, count: 100) {
        edges {
          node {
            seq
          }
        }
      }
    }
    viewer {
      unreadTotal
    }
  }
`)

export const FollowThread = graphql(`
  mutation ThreadFollow($messageId: ID!, $follow: Boolean!) {
    followThread(messageId: $messageId, follow: $follow) {
      seq
      thread {
        ...ThreadSummaryFields
      }
    }
  }
`)

export const MarkThreadRead = graphql(`
  mutation ThreadMarkRead($messageId: ID!, $seq: SafeInt) {
    markThreadRead(messageId: $messageId, seq: $seq) {
      seq
      thread {
        ...ThreadSummaryFields
      }
    }
  }
`)

export const ViewerThreads = graphql(`
  query ViewerThreads($first: Int, $after: String, $unreadOnly: Boolean) {
    viewer {
      threads(first: $first, after: $after, unreadOnly: $unreadOnly) {
        edges {
          cursor
          node {
            id
            seq
            conversationId
            thread {
              viewerUnreadCount
              replyCount
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

let replies = 0

/** Sends a text reply in the thread of `rootId` (a message id) as `user`; returns the reply. */
export async function reply(
  user: TestUser,
  conversationId: string,
  rootId: string,
  opts: { also?: boolean; mentions?: string[]; to?: string[]; text?: string } = {},
) {
  const { sendMessage } = await user.run(SendReply, {
    input: {
      conversationId,
      clientMessageId: `reply-${process.pid}-${++replies}`,
      content: { text: { text: opts.text ?? `reply ${replies}` } },
      threadRootId: rootId,
      alsoInConversation: opts.also ?? false,
      mentionUserIds: opts.mentions ?? [],
      visibleToUserIds: opts.to ?? [],
    },
  })
  return sendMessage.message
}

export const RootsWithThreads = graphql(`
  query RootsWithThreads($id: ID!, $last: Int!) {
    conversation(id: $id) {
      messages(last: $last) {
        edges {
          node {
            seq
            sender {
              id
            }
            thread {
              replyCount
              lastReplyAt
              viewerUnreadCount
              participants {
                id
                handle
              }
            }
          }
        }
      }
    }
  }
`)
