import type { Conn } from './sql.ts'
import type { WebhookEventType } from './webhooks.ts'

/**
 * An outbox event that is not a message (decision 0276): its body's `data` is fixed when the change
 * commits, and it says who may hear it. Message events keep their own path
 * (webhookDeliveries.ts#enqueueDeliveries), which snapshots the message row.
 */
export type WebhookEvent = {
  type: WebhookEventType
  /**
   * Where it happened. Its deliveries queue with the conversation's messages, after those already
   * written (they take the conversation's pts as it stands). Null (a friendship): they queue per
   * webhook, in the order they were written.
   */
  conversationId: number | null
  /** Who made the change: that user's VIEWER webhooks do not hear it (no echo). Null: nobody's own. */
  actorId: number | null
  /**
   * Whose VIEWER webhooks hear it: these users, and with `members` every current member of the
   * conversation. `allScope`: ALL-scope webhooks hear it too (once per change, not per side).
   */
  hearers: { userIds: readonly number[]; members: boolean; allScope: boolean }
  /** The body's `data` beside `conversationId` (and `pts` with `withPts`): ids as the GraphQL API gives them. */
  data: Record<string, unknown>
  /** Report the conversation's pts as it stands after the change (a membership change) in the body. */
  withPts: boolean
}

/**
 * Writes the deliveries of `events` (in the caller's transaction) for every webhook whose events
 * and conversation filter match (an event of no conversation matches no conversation filter): ALL
 * scope when `allScope`, VIEWER scope when the owner is a hearer and not the actor.
 */
export async function enqueueEventDeliveries(conn: Conn, events: readonly WebhookEvent[]): Promise<number> {
  const ids = (pick: (e: WebhookEvent) => number | null) => events.map((e) => pick(e)?.toString() ?? null)
  return conn.$executeRaw`
    INSERT INTO webhook_deliveries (webhook_id, conversation_id, pts, event_type, snapshot)
    SELECT w.id, e.conversation_id, c.last_pts, e.event_type,
      jsonb_build_object('data', e.data::jsonb, 'withPts', e.with_pts)
    FROM unnest(${events.map((e) => e.type)}::"WebhookEventType"[], ${ids((e) => e.conversationId)}::bigint[],
      ${ids((e) => e.actorId)}::bigint[], ${events.map((e) => JSON.stringify(e.hearers.userIds))}::jsonb[],
      ${events.map((e) => e.hearers.members)}::boolean[], ${events.map((e) => e.hearers.allScope)}::boolean[],
      ${events.map((e) => JSON.stringify(e.data))}::text[], ${events.map((e) => e.withPts)}::boolean[])
      WITH ORDINALITY AS e(event_type, conversation_id, actor_id, user_ids, members, all_scope, data, with_pts, n)
    LEFT JOIN conversations c ON c.id = e.conversation_id
    JOIN webhooks w ON e.event_type = ANY(w.events)
      AND (w.conversation_ids IS NULL OR e.conversation_id = ANY(w.conversation_ids))
    WHERE CASE WHEN w.scope = 'ALL' THEN e.all_scope
      ELSE e.actor_id IS DISTINCT FROM w.owner_id AND (e.user_ids @> to_jsonb(w.owner_id)
        OR (e.members AND EXISTS (SELECT 1 FROM conversation_members cm
          WHERE cm.conversation_id = e.conversation_id AND cm.user_id = w.owner_id AND cm.left_at IS NULL)))
      END
    ORDER BY e.n, w.id`
}
