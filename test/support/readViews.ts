import { graphql } from '../gql/index.ts'

/** Queries shaped for one test file each: read state, receipts, unread counts, favourites and reminders. */

export const Inbox = graphql(`
  query Inbox($first: Int) {
    viewer {
      conversations(first: $first) {
        edges {
          node {
            id
            type
            title
            lastSeq
            peer {
              id
              handle
            }
            viewerMember {
              role
              lastReadSeq
              user {
                handle
              }
            }
            lastMessage {
              seq
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
                  actor {
                    handle
                  }
                }
              }
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

export const ReadState = graphql(`
  query ReadState($id: ID!) {
    conversation(id: $id) {
      lastSeq
      unreadCount
      mentionedUnreadCount
      viewerMember {
        lastReadSeq
      }
    }
  }
`)

export const InboxUnread = graphql(`
  query InboxUnread($first: Int) {
    viewer {
      unreadTotal
      conversations(first: $first) {
        edges {
          node {
            id
            unreadCount
            mentionedUnreadCount
          }
        }
      }
    }
  }
`)

export const Receipts = graphql(`
  query Receipts($id: ID!, $last: Int) {
    conversation(id: $id) {
      messages(last: $last) {
        edges {
          node {
            seq
            senderType
            receipt {
              readByPeer
              readCount
              unreadCount
            }
          }
        }
      }
    }
  }
`)

export const ReceiptReaders = graphql(`
  query ReceiptReaders($id: ID!, $seq: SafeInt!, $read: Boolean, $first: Int, $after: String) {
    conversation(id: $id) {
      message(seq: $seq) {
        receipt {
          readers(read: $read, first: $first, after: $after) {
            edges {
              node {
                id
              }
            }
            pageInfo {
              hasNextPage
              hasPreviousPage
              endCursor
            }
          }
        }
      }
    }
  }
`)

export const ReceiptsUnreadCount = graphql(`
  query ReceiptsUnreadCount($id: ID!) {
    conversation(id: $id) {
      unreadCount
    }
  }
`)

export const ModelCounts = graphql(`
  query ModelCounts {
    viewer {
      unreadTotal
      conversations(first: 10) {
        edges {
          node {
            id
            unreadCount
            mentionedUnreadCount
            viewerMember {
              lastReadSeq
            }
            viewerSettings {
              doNotDisturb
              markedUnread
            }
          }
        }
      }
      archived: conversations(first: 10, archived: true) {
        edges {
          node {
            id
          }
        }
      }
    }
  }
`)

export const ModelReaders = graphql(`
  query ModelReaders($id: ID!, $seq: SafeInt!) {
    conversation(id: $id) {
      message(seq: $seq) {
        receipt {
          readers(first: 10) {
            edges {
              node {
                id
              }
            }
          }
          notRead: readers(read: false, first: 10) {
            edges {
              node {
                id
              }
            }
          }
        }
      }
    }
  }
`)

export const UserActionsViews = graphql(`
  query UserActionsViews($id: ID!, $seq: SafeInt!) {
    conversation(id: $id) {
      lastMessage {
        seq
      }
      message(seq: $seq) {
        seq
      }
      messages(last: 100) {
        edges {
          node {
            seq
          }
        }
      }
      messagesAround(seq: $seq, count: 5) {
        edges {
          node {
            seq
          }
        }
      }
      changes(sincePts: 0) {
        messages {
          seq
        }
      }
    }
  }
`)

export const UserActionsFavorites = graphql(`
  query UserActionsFavorites($first: Int, $after: String) {
    viewer {
      favorites(first: $first, after: $after) {
        edges {
          cursor
          node {
            id
            viewerState {
              favorite
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
  }
`)

export const UserActionsReminders = graphql(`
  query UserActionsReminders($first: Int, $after: String, $dueBefore: DateTime) {
    viewer {
      reminders(first: $first, after: $after, dueBefore: $dueBefore) {
        edges {
          node {
            id
            viewerState {
              remindAt
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

export const UserActionsHistoryWithState = graphql(`
  query UserActionsHistoryWithState($id: ID!, $last: Int) {
    conversation(id: $id) {
      messages(last: $last) {
        edges {
          node {
            seq
            viewerState {
              favorite
              remindAt
            }
            edits {
              version
            }
          }
        }
      }
    }
  }
`)
