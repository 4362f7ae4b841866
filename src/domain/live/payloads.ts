import type { MessageKey } from '../core/ids.ts'
import type { MessageEventKind, RealtimeEvent } from '../../realtime/events.ts'
import type { ConversationAccess } from '../../store/conversations.ts'
import type { MessageRecord } from '../../store/records.ts'
import type { ViewerState } from '../../store/userActions.ts'
import type { FriendshipState } from '../../store/friendships.ts'
import type { Loaders } from '../history/loaders.ts'
import { isRecalled } from '../policy/policy.ts'

/** A subscription's GraphQL payload; `Error` ends the stream with that error (masked unless a DomainError). */
export type EventPayload =
  | { typename: 'MessageEvent'; kind: MessageEventKind; pts: number; message: MessageRecord; alert: boolean }
  | { typename: 'ReadEvent'; conversationId: number; userId: number; lastReadSeq: number }
  | { typename: 'TypingEvent'; conversationId: number; userId: number; expiresAt: Date; status: string | null }
  | {
      typename: 'SignalEvent'
      conversationId: number
      userId: number
      signalType: string
      payload: unknown
      sentAt: Date
    }
  | { typename: 'MessageStreamEvent'; key: MessageKey; sequence: number; delta: string; text: string }
  | { typename: 'ReminderDueEvent'; message: MessageRecord; remindAt: Date }
  | { typename: 'ConversationJoinedEvent'; conversation: ConversationAccess }
  | { typename: 'MessageActionEvent'; key: MessageKey; state: ViewerState }
  | { typename: 'ConversationUpdatedEvent'; conversation: ConversationAccess }
  | { typename: 'ConversationRemovedEvent'; conversationId: number }
  | { typename: 'FriendshipEvent'; userId: number; state: FriendshipState }
  | { typename: 'ThreadUpdatedEvent'; root: MessageKey; following: boolean; lastReadSeq: number }
  | { typename: 'PresenceEvent'; userId: number; online: boolean; lastSeenAt: Date | null }
  // Never sent: tells the account stream to read the sync difference, which carries the change.
  | { typename: 'AccountChanged' }
  | { typename: 'Error'; error: Error }

/**
 * What a live event looks like to one subscriber, as far as it may differ between members: `key`
 * names the view (a MessageEvent's `alert`), `scope` is one per event (its wave). Subscribers with
 * the same key in the same scope may be answered with one execution and one serialised result when
 * their operation selects nothing else that depends on the viewer (schema/sharedViews.ts).
 */
export type SharedView = { key: string; scope: Map<unknown, unknown> }

/** One event for one subscriber, with the loaders its fields resolve through (primed from the shared reads). */
export type Delivery = { payload: EventPayload; loaders: Loaders; view?: SharedView }
/** Consecutive events for one subscriber that share their loaders (a replayed page, or one live event). */
export type DeliveryBatch = { payloads: EventPayload[]; loaders: Loaders }

/** A presence change as its PresenceEvent (the bus carries the time as text). */
export const presencePayload = (e: Extract<RealtimeEvent, { type: 'presence' }>): EventPayload => ({
  typename: 'PresenceEvent',
  userId: e.subjectId,
  online: e.online,
  lastSeenAt: e.lastSeenAt === null ? null : new Date(e.lastSeenAt),
})

export const batchOf = (delivery: Delivery): DeliveryBatch => ({
  payloads: [delivery.payload],
  loaders: delivery.loaders,
})

/** What a stored message's latest change was, for replayed and gap-filled events (`reacted`: its pts is a reaction change's). */
export const kindOf = (m: { status: MessageRecord['status']; edited: boolean; reacted: boolean }): MessageEventKind =>
  isRecalled(m) ? 'RECALLED' : m.reacted ? 'REACTIONS_CHANGED' : m.edited ? 'EDITED' : 'ADDED'
