import { graphql } from '../gql/index.ts'

/** Push device and presence operations of the tests. */

export const RegisterPushDevice = graphql(`
  mutation RegisterPushDevice($platform: PushPlatform!, $token: String!, $appId: String) {
    registerPushDevice(platform: $platform, token: $token, appId: $appId) {
      id
      platform
      tokenSuffix
      appId
      createdAt
      lastNotifiedAt
    }
  }
`)

export const UnregisterPushDevice = graphql(`
  mutation UnregisterPushDevice($id: ID!) {
    unregisterPushDevice(id: $id)
  }
`)

export const ViewerPushDevices = graphql(`
  query ViewerPushDevices {
    viewer {
      pushDevices {
        id
        platform
        tokenSuffix
        appId
        lastNotifiedAt
      }
    }
  }
`)

export const UserPresence = graphql(`
  query UserPresence($id: ID!) {
    node(id: $id) {
      ... on User {
        presence {
          online
          lastSeenAt
        }
      }
    }
  }
`)

export const SetPresenceVisible = graphql(`
  mutation SetPresenceVisible($visible: Boolean!) {
    setPresenceVisible(visible: $visible) {
      presenceVisible
    }
  }
`)

export const PresenceEvents = graphql(`
  subscription PresenceEvents {
    inboxEvents {
      __typename
      ... on PresenceEvent {
        user {
          id
        }
        online
        lastSeenAt
      }
    }
  }
`)

/** An APNs-style token (hex) unique to the test. */
export const apnsToken = () =>
  [...crypto.getRandomValues(new Uint8Array(32))].map((b) => b.toString(16).padStart(2, '0')).join('')
