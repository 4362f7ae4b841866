import { encodeGlobalId, parseMessageId } from '../../src/domain/core/ids.ts'
import { graphql } from '../gql/index.ts'
import type { TestUser } from './harness.ts'

/** Operations and a device model shared by the account-level sync tests (Query.sync, viewerUpdates). */

export const SyncToken = graphql(`
  query SyncToken {
    viewer {
      syncToken
    }
  }
`)

// A fragment for codegen: the operations that spread it carry it in their generated documents.
graphql(`
  fragment SyncConversation on Conversation {
    id
    title
    lastPts
    unreadCount
    viewerMember {
      lastReadSeq
    }
    pinnedMessages {
      message {
        id
      }
    }
    viewerSettings {
      doNotDisturbUntil
      pinnedAt
      archived
      markedUnread
      draft {
        text
      }
    }
  }
`)

export const Sync = graphql(`
  query Sync($since: String!, $first: Int) {
    sync(since: $since, first: $first) {
      token
      hasMore
      conversations {
        ...SyncConversation
      }
      removedConversationIds
      messageStates {
        messageId
        deletedForMe
        favorite
        remindAt
      }
    }
  }
`)

/** What a device loads fresh: its token first, then the state the token stands for, in one request. */
export const FreshState = graphql(`
  query SyncFreshState {
    viewer {
      syncToken
      conversations(first: 100) {
        edges {
          node {
            ...SyncConversation
          }
        }
      }
      archived: conversations(first: 100, archived: true) {
        edges {
          node {
            ...SyncConversation
          }
        }
      }
      favorites(first: 100) {
        edges {
          node {
            id
          }
        }
      }
      reminders(first: 100) {
        edges {
          node {
            id
          }
        }
      }
    }
  }
`)

/** What a client reads after a conversation's lastPts moved. */
const SyncChanges = graphql(`
  query SyncChanges($id: ID!, $sincePts: SafeInt!) {
    conversation(id: $id) {
      changes(sincePts: $sincePts, first: 100) {
        hasMore
        messages {
          id
          pts
          status
        }
      }
    }
  }
`)

export const ViewerUpdates = graphql(`
  subscription SyncViewerUpdates($since: String) {
    viewerUpdates(since: $since) {
      token
      event {
        __typename
        ... on MessageEvent {
          kind
          pts
          message {
            id
            conversation {
              id
            }
          }
        }
        ... on ConversationUpdatedEvent {
          conversation {
            id
            lastPts
          }
        }
        ... on ConversationRemovedEvent {
          conversationId
        }
        ... on MessageActionEvent {
          messageId
          deletedForMe
          favorite
          remindAt
        }
      }
    }
  }
`)

type Conversation = { id: string; lastPts: number; viewerMember: { lastReadSeq: number } } & Record<string, unknown>
type State = { deletedForMe: boolean; favorite: boolean; remindAt?: string | null }
type Batch = {
  token: string
  hasMore: boolean
  conversations: Conversation[]
  removedConversationIds: string[]
  messageStates: (State & { messageId: string })[]
}

/** The comparable view of a device: conversations, and the favourites and reminders it would list. */
export type DeviceView = { conversations: Conversation[]; favorites: string[]; reminders: string[] }

/**
 * A device as sync describes it: a snapshot (conversations with lastPts, unread counts, the
 * viewer's read position, settings and draft, pinned messages; its message states; what it learnt was recalled through
 * Conversation.changes) and a token. `apply` is everything a client does with a batch.
 */
export class Device {
  token = ''
  readonly conversations = new Map<string, Conversation>()
  readonly states = new Map<string, State & { conversationId: string }>()
  readonly recalled = new Set<string>()

  constructor(readonly user: TestUser) {}

  async load(): Promise<DeviceView> {
    const { viewer } = await this.user.run(FreshState)
    this.token = viewer.syncToken
    for (const { node } of [...viewer.conversations.edges, ...viewer.archived.edges])
      this.conversations.set(node.id, node)
    return freshView(viewer)
  }

  /** One sync round: batches until hasMore is false. */
  async sync(first?: number): Promise<Batch[]> {
    const batches: Batch[] = []
    for (;;) {
      const batch = (await this.user.run(Sync, { since: this.token, first })).sync
      await this.apply(batch)
      batches.push(batch)
      if (!batch.hasMore) return batches
    }
  }

  async apply(batch: Batch): Promise<void> {
    for (const c of batch.conversations) {
      await this.learnRecalls(c.id, this.conversations.get(c.id)?.lastPts ?? 0)
      this.conversations.set(c.id, c)
    }
    for (const id of batch.removedConversationIds) this.conversations.delete(id)
    for (const s of batch.messageStates)
      this.states.set(s.messageId, { ...s, conversationId: conversationOf(s.messageId) })
    this.token = batch.token
  }

  private async learnRecalls(conversationId: string, sincePts: number): Promise<void> {
    for (let after = sincePts; ;) {
      const response = await this.user.try(SyncChanges, { id: conversationId, sincePts: after })
      const changes = response.data?.conversation?.changes
      if (!changes) return // removed meanwhile: a later batch says so
      for (const m of changes.messages) if (m.status === 'RECALLED') this.recalled.add(m.id)
      if (!changes.hasMore) return
      after = changes.messages.at(-1)!.pts
    }
  }

  view(): DeviceView {
    const listed = (pick: (s: State) => boolean) =>
      [...this.states]
        .filter(
          ([id, s]) => pick(s) && !s.deletedForMe && !this.recalled.has(id) && this.conversations.has(s.conversationId),
        )
        .map(([id]) => id)
        .sort()
    return {
      conversations: [...this.conversations.values()].sort((a, b) => a.id.localeCompare(b.id)),
      favorites: listed((s) => s.favorite),
      reminders: listed((s) => s.remindAt != null),
    }
  }
}

type Fresh = {
  conversations: { edges: { node: Conversation }[] }
  archived: { edges: { node: Conversation }[] }
  favorites: { edges: { node: { id: string } }[] }
  reminders: { edges: { node: { id: string } }[] }
}

function freshView(viewer: Fresh): DeviceView {
  return {
    conversations: [...viewer.conversations.edges, ...viewer.archived.edges]
      .map((e) => e.node)
      .sort((a, b) => a.id.localeCompare(b.id)),
    favorites: viewer.favorites.edges.map((e) => e.node.id).sort(),
    reminders: viewer.reminders.edges.map((e) => e.node.id).sort(),
  }
}

/** What a fresh query shows the user now. */
export async function freshViewOf(user: TestUser): Promise<DeviceView> {
  return freshView((await user.run(FreshState)).viewer)
}

/** The global id of a message's conversation. */
const conversationOf = (messageId: string): string =>
  encodeGlobalId('Conversation', parseMessageId(messageId).conversationId)
