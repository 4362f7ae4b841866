import { findPressedActions } from '../../store/cards.ts'
import DataLoader from 'dataloader'
import type { Db } from '../../db/client.ts'
import { messageKeyText as messageKey, type MessageKey } from '../core/ids.ts'
import { groupBy } from '../../lib/groupBy.ts'
import { findConversationsForUser, type ConversationAccess } from '../../store/conversations.ts'
import { findPeers } from '../../store/members.ts'
import { findSettings, noSettings, type SettingsRecord } from '../../store/conversationSettings.ts'
import { findEdits, type MessageEditRecord } from '../../store/lifecycle.ts'
import { findLastVisibleMessages, findVisibleMessages } from '../../store/messages.ts'
import { listVisiblePins, type PinRecord } from '../../store/pins.ts'
import {
  findReactionGroups,
  listReactors,
  type ReactionGroupRecord,
  type ReactorPage,
  type ReactorRecord,
} from '../../store/reactions.ts'
import { countReceipts, countUnread, type ReceiptCounts, type UnreadCounts } from '../../store/reads.ts'
import type { MessageRecord, UserRecord } from '../../store/records.ts'
import { NO_ACTIONS, findViewerStates, type ViewerState } from '../../store/userActions.ts'
import { findUsersByIds } from '../../store/users.ts'
import { findFriendshipStates, type FriendshipState } from '../../store/friendships.ts'
import type { Viewer } from '../core/app.ts'

/** What a set's loaders read with: its database, its viewer, and the set itself (to prime one loader from another's rows). */
type LoaderScope = {
  db: Db
  viewerId: number
  loaders: {
    users: DataLoader<number, UserRecord | null>
    messages: DataLoader<MessageKey, MessageRecord | null, string>
  }
}

const byKey = <K, V>(rows: V[], keyOf: (v: V) => K) => new Map(rows.map((r) => [keyOf(r), r]))

/**
 * Per-request batch loaders, so the number of SQL statements for a page does not grow with its size.
 * Everything is read as the viewer may see it. The factories are shared by every set, which holds
 * only its scope and the loaders made so far.
 */
const factories = {
  users: ({ db }: LoaderScope) =>
    new DataLoader<number, UserRecord | null>(async (ids) => {
      const found = byKey(await findUsersByIds(db, ids), (u) => u.id)
      return ids.map((id) => found.get(id) ?? null)
    }),
  /** Users that came with a read of their own (primeUsers): a field reads them without a promise. */
  heldUsers: () => new Map<number, UserRecord>(),
  /** A conversation with the viewer's membership (member null when not a member). */
  conversations: ({ db, viewerId }: LoaderScope) =>
    new DataLoader<number, ConversationAccess | null>(async (ids) => {
      const found = byKey(await findConversationsForUser(db, ids, viewerId), (a) => a.conversation.id)
      return ids.map((id) => found.get(id) ?? null)
    }),
  /** Messages the viewer may see, by (conversationId, seq). */
  messages: ({ db, viewerId }: LoaderScope) =>
    new DataLoader<MessageKey, MessageRecord | null, string>(
      async (keys) => {
        const found = byKey(await findVisibleMessages(db, { userId: viewerId }, keys), messageKey)
        return keys.map((k) => found.get(messageKey(k)) ?? null)
      },
      { cacheKeyFn: messageKey },
    ),
  lastMessages: ({ db, viewerId }: LoaderScope) =>
    new DataLoader<number, MessageRecord | null>(async (ids) => {
      const found = byKey(await findLastVisibleMessages(db, { userId: viewerId }, ids), (m) => m.conversationId)
      return ids.map((id) => found.get(id) ?? null)
    }),
  /** Pinned messages the viewer may see, per conversation, newest pin first (one statement for a page of conversations). */
  pins: ({ db, viewerId, loaders }: LoaderScope) =>
    new DataLoader<number, PinRecord[]>(async (ids) => {
      const pins = await listVisiblePins(db, { userId: viewerId }, ids)
      for (const pin of pins) loaders.messages.prime(pin.message, pin.message)
      const found = groupBy(pins, (p) => p.message.conversationId)
      return ids.map((id) => found.get(id) ?? [])
    }),
  /** The other participant, per conversation. */
  peers: ({ db, viewerId, loaders }: LoaderScope) =>
    new DataLoader<number, UserRecord | null>(async (ids) => {
      const found = new Map((await findPeers(db, ids, viewerId)).map((p) => [p.conversationId, p.user]))
      // The peers' rows arrive with them: prime the user loader instead of batching them again later.
      for (const user of found.values()) loaders.users.prime(user.id, user)
      return ids.map((id) => found.get(id) ?? null)
    }),
  /** Earlier versions of each message, oldest first. */
  edits: ({ db }: LoaderScope) =>
    new DataLoader<MessageKey, MessageEditRecord[], string>(
      async (keys) => {
        const found = groupBy(await findEdits(db, keys), messageKey)
        return keys.map((k) => found.get(messageKey(k)) ?? [])
      },
      { cacheKeyFn: messageKey },
    ),
  /** The viewer's own favourite, reminder and delete-for-me state of each message. */
  viewerStates: ({ db, viewerId }: LoaderScope) =>
    new DataLoader<MessageKey, ViewerState, string>(
      async (keys) => {
        const found = byKey(await findViewerStates(db, viewerId, keys), messageKey)
        return keys.map((k) => found.get(messageKey(k)) ?? NO_ACTIONS)
      },
      { cacheKeyFn: messageKey },
    ),
  /** The action the viewer pressed on each card, or null (CardContent.viewerActionId). */
  pressedActions: ({ db, viewerId }: LoaderScope) =>
    new DataLoader<MessageKey, string | null, string>(
      async (keys) => {
        const found = byKey(await findPressedActions(db, viewerId, keys), messageKey)
        return keys.map((k) => found.get(messageKey(k))?.actionId ?? null)
      },
      { cacheKeyFn: messageKey },
    ),
  /** The viewer's friendship with each user (User.viewerFriendship). */
  friendships: ({ db, viewerId }: LoaderScope) =>
    new DataLoader<number, FriendshipState>(async (ids) => {
      const found = await findFriendshipStates(db, viewerId, ids)
      return ids.map((id) => found.get(id) ?? 'NONE')
    }),
  /** Each message's reaction groups with the viewer's own mark (one statement for a page of messages). */
  reactions: ({ db, viewerId }: LoaderScope) =>
    new DataLoader<MessageKey, ReactionGroupRecord[], string>(
      async (keys) => {
        const found = groupBy(await findReactionGroups(db, viewerId, keys), messageKey)
        return keys.map((k) => found.get(messageKey(k)) ?? [])
      },
      { cacheKeyFn: messageKey },
    ),
  /** Pages of who reacted, for every ReactionGroup.users of a request in one statement. */
  reactors: ({ db, loaders }: LoaderScope) =>
    new DataLoader<ReactorPage, ReactorRecord[], string>(
      async (pages) => {
        const found = await listReactors(db, pages)
        for (const user of found.flat()) loaders.users.prime(user.id, user)
        return found
      },
      { cacheKeyFn: (p) => JSON.stringify(p) },
    ),
  /** The viewer's unread and mentioned-unread counts, per conversation (one statement for an inbox page). */
  unreadCounts: ({ db, viewerId }: LoaderScope) =>
    new DataLoader<number, UnreadCounts>(async (ids) => {
      const found = byKey(await countUnread(db, { userId: viewerId }, ids), (c) => c.conversationId)
      return ids.map((id) => found.get(id) ?? { unread: 0, mentioned: 0 })
    }),
  /** The viewer's own settings and draft, per conversation (one statement for an inbox page). */
  conversationSettings: ({ db, viewerId }: LoaderScope) =>
    new DataLoader<number, SettingsRecord>(async (ids) => {
      const found = byKey(await findSettings(db, viewerId, ids), (s) => s.conversationId)
      return ids.map((id) => found.get(id) ?? noSettings(id, viewerId))
    }),
  /** Read and unread audience counts of the viewer's own messages (one statement for a page of them). */
  receiptCounts: ({ db, viewerId }: LoaderScope) =>
    new DataLoader<MessageKey, ReceiptCounts, string>(
      async (keys) => {
        const found = byKey(await countReceipts(db, viewerId, keys), messageKey)
        return keys.map((k) => found.get(messageKey(k)) ?? { ...k, read: 0, unread: 0 })
      },
      { cacheKeyFn: messageKey },
    ),
}

type Factories = typeof factories
type Made = { -readonly [K in keyof Factories]: ReturnType<Factories[K]> }
/** Factories that replace the usual ones in one set (a live event's: answered from reads its subscribers share). */
export type LoaderOverrides = { [K in keyof Factories]?: (scope: LoaderScope) => Made[K] }
type Target = LoaderScope & { made: Partial<Made>; overrides: LoaderOverrides }

/** Creates each loader the first time it is read; a loader set may also be assigned one (a shared one). */
const lazyHandler: ProxyHandler<Target> = {
  get: (target, key) =>
    typeof key === 'string' && Object.hasOwn(factories, key)
      ? (target.made[key as keyof Made] ??= (
          target.overrides[key as keyof Factories] ?? factories[key as keyof Factories]
        )(target) as never)
      : undefined,
  set: (target, key, value) =>
    typeof key === 'string' && Object.hasOwn(factories, key) && ((target.made[key as keyof Made] = value), true),
}

/**
 * A set of loaders, each made on first use: a subscription's context, or one live event, uses two
 * or three of them, and an open subscription holds its set.
 */
export function createLoaders(db: Db, viewer: Viewer | null, overrides: LoaderOverrides = {}): Made {
  const target = { db, viewerId: viewer?.userId ?? 0, made: {}, overrides } as Target
  const loaders = new Proxy(target, lazyHandler) as unknown as Made
  target.loaders = loaders
  return loaders
}

export type Loaders = ReturnType<typeof createLoaders>

/** Hands users read with something else to the request's loaders. */
export function primeUsers(loaders: Loaders, users: readonly UserRecord[]): void {
  for (const user of users) {
    loaders.users.prime(user.id, user)
    loaders.heldUsers.set(user.id, user)
  }
}

/**
 * A user by id: at once when primeUsers gave it, else through the users loader. A history page's
 * 50 senders are then 50 plain values, not 50 promises resolved one microtask after another.
 */
export const loadUser = (loaders: Loaders, id: number): UserRecord | Promise<UserRecord | null> =>
  loaders.heldUsers.get(id) ?? loaders.users.load(id)

/** loadMany without the misses (deleted or invisible rows). */
export async function loadExisting<K, V, C>(loader: DataLoader<K, V | null, C>, keys: readonly K[]): Promise<V[]> {
  return (await loader.loadMany(keys)).filter((v): v is V => v !== null && !(v instanceof Error))
}
