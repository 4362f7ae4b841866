import { Prisma, type Conn } from './sql.ts'
import type { DeliveryStatus } from './webhookDeliveries.ts'
import type { WebhookEventType } from './webhooks.ts'

/** What the outbox keeps for owners and operators: Webhook.deliveries, the 7-day sweep, the pending-age gauge. */

export type DeliveryRecord = {
  id: number
  eventType: WebhookEventType
  conversationId: number | null
  pts: number | null
  status: DeliveryStatus
  attempts: number
  lastStatusCode: number | null
  lastError: string | null
  nextAttemptAt: Date | null
  deliveredAt: Date | null
  createdAt: Date
}

/** A webhook's deliveries, newest first, below `beforeId`. */
export async function listDeliveries(
  conn: Conn,
  webhookId: number,
  page: { beforeId: number | null; limit: number; status: DeliveryStatus | null },
): Promise<DeliveryRecord[]> {
  const rows = await conn.$queryRaw<(DeliveryRecord & Record<string, unknown>)[]>`
    SELECT d.id, d.event_type::text AS "eventType", d.conversation_id AS "conversationId", d.pts,
      d.status::text AS status, d.attempts, d.last_status_code AS "lastStatusCode", d.last_error AS "lastError",
      CASE WHEN d.status = 'PENDING' THEN d.next_attempt_at END AS "nextAttemptAt", d.delivered_at AS "deliveredAt",
      d.created_at AS "createdAt"
    FROM webhook_deliveries d
    WHERE d.webhook_id = ${webhookId}
      ${page.beforeId === null ? Prisma.empty : Prisma.sql`AND d.id < ${page.beforeId}`}
      ${page.status === null ? Prisma.empty : Prisma.sql`AND d.status = ${page.status}::"WebhookDeliveryStatus"`}
    ORDER BY d.id DESC LIMIT ${page.limit}`
  return rows.map((r) => ({
    ...r,
    id: Number(r.id),
    conversationId: r.conversationId === null ? null : Number(r.conversationId),
    pts: r.pts === null ? null : Number(r.pts),
  }))
}

/** Deletes up to `limit` deliveries older than `keepMs`; returns how many. */
export const deleteOldDeliveries = (conn: Conn, keepMs: number, limit: number): Promise<number> =>
  conn.$executeRaw`
    DELETE FROM webhook_deliveries WHERE id IN (SELECT id FROM webhook_deliveries
      WHERE created_at < now() - ${keepMs} * interval '1 millisecond' ORDER BY created_at LIMIT ${limit})`

/** Seconds since the oldest PENDING delivery was written (0 when none waits). */
export async function oldestPendingAgeSeconds(conn: Conn): Promise<number> {
  const [row] = await conn.$queryRaw<{ age: number | null }[]>`
    SELECT extract(epoch FROM now() - min(created_at))::float8 AS age FROM webhook_deliveries WHERE status = 'PENDING'`
  return row?.age ?? 0
}
