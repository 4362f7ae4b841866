import { graphql } from '../gql/index.ts'

/** Operations of friendship (test/friends). */

export const RequestFriendship = graphql(`
  mutation RequestFriendship($userId: ID!) {
    requestFriendship(userId: $userId)
  }
`)

export const RespondToFriendship = graphql(`
  mutation RespondToFriendship($userId: ID!, $accept: Boolean!) {
    respondToFriendship(userId: $userId, accept: $accept)
  }
`)

export const RemoveFriend = graphql(`
  mutation RemoveFriend($userId: ID!) {
    removeFriend(userId: $userId)
  }
`)

export const FriendshipWith = graphql(`
  query FriendshipWith($id: ID!) {
    node(id: $id) {
      ... on User {
        viewerFriendship
      }
    }
  }
`)

export const FriendLists = graphql(`
  query FriendLists($first: Int, $friendsAfter: String, $requestsAfter: String) {
    viewer {
      friends(first: $first, after: $friendsAfter) {
        edges {
          node {
            id
            viewerFriendship
          }
        }
        pageInfo {
          hasNextPage
          endCursor
        }
      }
      friendRequests(first: $first, after: $requestsAfter) {
        edges {
          node {
            id
            viewerFriendship
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

/** A private conversation's SYSTEM messages, to count FRIEND_ADDED notices. */
export const FriendNotices = graphql(`
  query FriendNotices($id: ID!) {
    conversation(id: $id) {
      type
      messages(last: 50) {
        edges {
          node {
            senderType
            content {
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
    }
  }
`)

export const FriendInbox = graphql(`
  subscription FriendInbox {
    inboxEvents {
      __typename
      ... on FriendshipEvent {
        state
        user {
          id
        }
      }
    }
  }
`)

export const FriendViewerUpdates = graphql(`
  subscription FriendViewerUpdates($since: String) {
    viewerUpdates(since: $since) {
      token
      event {
        __typename
        ... on FriendshipEvent {
          state
          user {
            id
          }
        }
      }
    }
  }
`)
