import { parseId, parseMessageId } from '../../src/domain/core/ids.ts'
import type { RealtimeEvent } from '../../src/realtime/events.ts'
import type { Realtime } from '../../src/realtime/pubsub.ts'
import { graphql } from '../gql/index.ts'
import type { TestUser } from './harness.ts'

/** Operations and helpers shared by the message lifecycle, user action, change feed and reminder tests. */

// A fragment for codegen: the operations that spread it carry it in their generated documents.
graphql(`
  fragment LifecycleMessage on Message {
    id
    seq
    pts
    status
    kind
    sentAt
    editedAt
    recalledAt
    sender {
      id
    }
    recalledBy {
      id
    }
    content {
      __typename
      ... on TextContent {
        text
      }
    }
    edits {
      version
      editedAt
      content {
        ... on TextContent {
          text
        }
      }
    }
    viewerState {
      favorite
      remindAt
    }
  }
`)

export const EditMessage = graphql(`
  mutation LifecycleEdit($messageId: ID!, $text: String!) {
    editMessage(messageId: $messageId, content: { text: { text: $text } }) {
      ...LifecycleMessage
    }
  }
`)

export const RecallMessage = graphql(`
  mutation LifecycleRecall($messageId: ID!) {
    recallMessage(messageId: $messageId) {
      ...LifecycleMessage
    }
  }
`)

export const MessageBySeq = graphql(`
  query LifecycleMessageBySeq($id: ID!, $seq: SafeInt!) {
    conversation(id: $id) {
      lastPts
      message(seq: $seq) {
        ...LifecycleMessage
      }
    }
  }
`)

export const Changes = graphql(`
  query LifecycleChanges($id: ID!, $sincePts: SafeInt!, $first: Int) {
    conversation(id: $id) {
      changes(sincePts: $sincePts, first: $first) {
        lastPts
        hasMore
        messages {
          seq
          pts
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

export const SetFavorite = graphql(`
  mutation LifecycleSetFavorite($messageId: ID!, $favorite: Boolean!) {
    setFavorite(messageId: $messageId, favorite: $favorite) {
      id
      viewerState {
        favorite
        remindAt
      }
    }
  }
`)

export const SetReminder = graphql(`
  mutation LifecycleSetReminder($messageId: ID!, $remindAt: DateTime) {
    setReminder(messageId: $messageId, remindAt: $remindAt) {
      id
      viewerState {
        favorite
        remindAt
      }
    }
  }
`)

export const DeleteForMe = graphql(`
  mutation LifecycleDeleteForMe($ids: [ID!]!) {
    deleteMessagesForMe(messageIds: $ids)
  }
`)

export const RestoreForMe = graphql(`
  mutation LifecycleRestoreForMe($ids: [ID!]!) {
    restoreMessagesForMe(messageIds: $ids)
  }
`)

/** Numeric keys behind global ids, for realtime topics and events. */
export const conversationKey = (id: string) => parseId(id, 'Conversation')
export const messageKey = (id: string) => parseMessageId(id)
export const userKey = (id: string) => parseId(id, 'User')

/**
 * Collects what `realtime` publishes on `topic` from the moment the bus confirms the topic. The
 * in-process bus delivers during publish, which happens before a mutation answers, so `seen()` after
 * a mutation holds its events; `until` waits for events published outside a request (the scheduler).
 */
export async function listen(realtime: Realtime, topic: string) {
  const events: RealtimeEvent[] = []
  let wake = () => {}
  const listener = (event: RealtimeEvent) => {
    events.push(event)
    wake()
  }
  await realtime.listen(topic, listener)
  return {
    seen: async () => events,
    async until(done: (events: RealtimeEvent[]) => boolean) {
      while (!done(events)) await new Promise<void>((resolve) => (wake = resolve))
      return events
    },
    async stop() {
      realtime.unlisten(topic, listener)
    },
  }
}

/** The state of one message as `user` reads it. */
export async function readMessage(user: TestUser, conversationId: string, seq: number) {
  const { conversation } = await user.run(MessageBySeq, { id: conversationId, seq })
  return { lastPts: conversation!.lastPts, message: conversation!.message }
}

export const SendImage = graphql(`
  mutation LifecycleSendImage($conversationId: ID!, $clientMessageId: String!) {
    sendMessage(
      input: {
        conversationId: $conversationId
        clientMessageId: $clientMessageId
        content: { image: { url: "https://example.com/a.png" } }
      }
    ) {
      message {
        id
        seq
      }
    }
  }
`)

export const EditToImage = graphql(`
  mutation LifecycleEditToImage($messageId: ID!) {
    editMessage(messageId: $messageId, content: { image: { url: "https://example.com/b.png" } }) {
      id
    }
  }
`)
