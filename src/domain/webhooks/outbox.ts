import type { Tx } from '../../db/client.ts'
import type { MessageEventKind, RealtimeEvent } from '../../realtime/events.ts'
import { readPair } from '../../store/friendships.ts'
import { findUsersByIds } from '../../store/users.ts'
import { enqueueDeliveries, type OutboxEvent } from '../../store/webhookDeliveries.ts'
import { enqueueEventDeliveries, type WebhookEvent } from '../../store/webhookEvents.ts'
import type { WebhookEventType } from '../../store/webhooks.ts'
import { encodeGlobalId } from '../core/ids.ts'

/** @public For features that report events that are not messages (card actions: issue 42). */
export type { WebhookEvent }

/** The message events webhooks report, by the bus's kind. */
const TYPE_OF: Partial<Record<MessageEventKind, WebhookEventType>> = {
  ADDED: 'MESSAGE_ADDED',
  EDITED: 'MESSAGE_EDITED',
  RECALLED: 'MESSAGE_RECALLED',
  REACTIONS_CHANGED: 'REACTIONS_CHANGED',
  STREAM_ENDED: 'MESSAGE_STREAM_ENDED',
}

/**
 * Records webhook deliveries of events that are not messages (decision 0276), in the caller's
 * transaction: call it inside `transact`'s work with each event's body data as it is now. Nothing is
 * sent for a rolled-back transaction; the worker delivers the rest in order, signed and retried.
 * @public For features that report events that are not messages (card actions: issue 42).
 */
export async function recordWebhookEvents(tx: Tx, events: readonly WebhookEvent[]): Promise<void> {
  if (events.length) await enqueueEventDeliveries(tx, events)
}

/** This process's webhook workers, woken when a change that wrote deliveries commits. */
const committedListeners = new Set<() => void>()

/** Calls `listener` each time a transaction of this process commits deliveries; returns how to stop. */
export function onDeliveriesCommitted(listener: () => void): () => void {
  committedListeners.add(listener)
  return () => committedListeners.delete(listener)
}

const deliveriesCommitted = () => committedListeners.forEach((listener) => listener())

/**
 * The outbox half of a transaction: the deliveries of the events it is about to publish, written
 * before it commits (domain/core/transact.ts), so a rolled-back change sends nothing and a committed
 * one is sent even when the process dies right after the commit. Answers what to run once it
 * committed when it wrote any: this process's workers claim them then, not at their next poll.
 */
export async function recordWebhookDeliveries(
  tx: Tx,
  events: readonly RealtimeEvent[],
): Promise<(() => void) | undefined> {
  const reported: OutboxEvent[] = []
  for (const e of events) {
    const type = e.type === 'message' ? TYPE_OF[e.kind] : undefined
    if (type && e.type === 'message')
      reported.push({ conversationId: e.conversationId, seq: e.seq, pts: e.pts, type, actorId: e.actorId ?? null })
  }
  let written = reported.length ? await enqueueDeliveries(tx, reported) : 0
  const others = await membershipAndFriendshipEvents(tx, events)
  if (others.length) written += await enqueueEventDeliveries(tx, others)
  return written ? deliveriesCommitted : undefined
}

/**
 * membership.changed: to the conversation's members and the user concerned (so a removed user hears
 * of its removal, and nothing after). friendship.changed: to each side, with the state as that side
 * sees it; ALL-scope webhooks hear the actor's side only, once per change.
 */
async function membershipAndFriendshipEvents(tx: Tx, events: readonly RealtimeEvent[]): Promise<WebhookEvent[]> {
  const changes = events.filter((e) => e.type === 'joined' || e.type === 'removed' || e.type === 'friendship')
  if (!changes.length) return []
  const userIds = new Set(changes.flatMap((e) => [e.userId, e.actorId ?? e.userId]))
  for (const e of changes) if (e.type === 'friendship') userIds.add(e.peerId)
  const handles = new Map((await findUsersByIds(tx, [...userIds])).map((u) => [u.id, u.handle]))
  const user = (id: number) => ({ id: encodeGlobalId('User', id), handle: handles.get(id) ?? null })
  const recorded: WebhookEvent[] = []
  for (const e of changes) {
    const actorId = e.actorId ?? null
    if (e.type === 'friendship') {
      const { state } = await readPair(tx, e.userId, e.peerId)
      recorded.push({
        type: 'FRIENDSHIP_CHANGED',
        conversationId: null,
        actorId,
        hearers: { userIds: [e.userId], members: false, allScope: actorId === null || actorId === e.userId },
        data: { viewer: user(e.userId), user: user(e.peerId), state },
        withPts: false,
      })
    } else {
      const own = actorId === null || actorId === e.userId
      recorded.push({
        type: 'MEMBERSHIP_CHANGED',
        conversationId: e.conversationId,
        actorId,
        hearers: { userIds: [e.userId], members: true, allScope: true },
        data: {
          change: e.type === 'joined' ? (own ? 'JOINED' : 'ADDED') : own ? 'LEFT' : 'REMOVED',
          user: user(e.userId),
          actor: actorId === null ? null : user(actorId),
        },
        withPts: true,
      })
    }
  }
  return recorded
}
