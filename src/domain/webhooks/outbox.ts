import type { Tx } from '../../db/client.ts'
import type { MessageEventKind, RealtimeEvent } from '../../realtime/events.ts'
import { enqueueDeliveries, type OutboxEvent } from '../../store/webhookDeliveries.ts'
import type { WebhookEventType } from '../../store/webhooks.ts'

/** The message events webhooks report, by the bus's kind. */
const TYPE_OF: Partial<Record<MessageEventKind, WebhookEventType>> = {
  ADDED: 'MESSAGE_ADDED',
  EDITED: 'MESSAGE_EDITED',
  RECALLED: 'MESSAGE_RECALLED',
  REACTIONS_CHANGED: 'REACTIONS_CHANGED',
}

/**
 * The outbox half of a transaction: the deliveries of the events it is about to publish, written
 * before it commits (domain/core/transact.ts), so a rolled-back change sends nothing and a committed
 * one is sent even when the process dies right after the commit.
 */
export async function recordWebhookDeliveries(tx: Tx, events: readonly RealtimeEvent[]): Promise<void> {
  const reported: OutboxEvent[] = []
  for (const e of events) {
    const type = e.type === 'message' ? TYPE_OF[e.kind] : undefined
    if (type && e.type === 'message')
      reported.push({ conversationId: e.conversationId, seq: e.seq, pts: e.pts, type, actorId: e.actorId ?? null })
  }
  if (reported.length) await enqueueDeliveries(tx, reported)
}
