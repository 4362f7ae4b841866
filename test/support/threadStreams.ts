import { graphql } from '../gql/index.ts'

/** Operations of test/threads for streams, sync and client caches. */

export const ThreadEvents = graphql(`
  subscription ThreadConversationEvents($conversationId: ID!, $sincePts: SafeInt) {
    conversationEvents(conversationId: $conversationId, sincePts: $sincePts) {
      __typename
      ... on MessageEvent {
        kind
        alert
        message {
          id
          seq
          inConversation
          threadRoot {
            id
            thread {
              replyCount
            }
          }
        }
      }
    }
  }
`)

/** A client's view of a root: its reply count, as a thread screen's list item shows it. */
export const ClientThreadRoot = graphql(`
  query ClientThreadRoot($id: ID!, $seq: SafeInt!) {
    conversation(id: $id) {
      id
      message(seq: $seq) {
        id
        seq
        thread {
          replyCount
          lastReplyAt
        }
      }
    }
  }
`)

/** The reply's event selects its root's summary: a normalized cache updates the root in place. */
export const ClientThreadEvents = graphql(`
  subscription ClientThreadEvents($id: ID!, $sincePts: SafeInt) {
    conversationEvents(conversationId: $id, sincePts: $sincePts) {
      ... on MessageEvent {
        kind
        message {
          id
          threadRoot {
            id
            thread {
              replyCount
              lastReplyAt
            }
          }
        }
      }
    }
  }
`)

export const ClientThreadPts = graphql(`
  query ClientThreadPts($id: ID!) {
    conversation(id: $id) {
      lastPts
    }
  }
`)

export const ThreadSync = graphql(`
  query ThreadSync($since: String!) {
    sync(since: $since) {
      token
      hasMore
      conversations {
        id
        lastPts
      }
      threadStates {
        rootId
        following
        lastReadSeq
      }
    }
  }
`)

export const ThreadViewerUpdates = graphql(`
  subscription ThreadViewerUpdates($since: String) {
    viewerUpdates(since: $since) {
      token
      event {
        __typename
        ... on ThreadUpdatedEvent {
          rootId
          following
          lastReadSeq
          root {
            seq
          }
        }
      }
    }
  }
`)
