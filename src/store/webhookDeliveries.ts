import { directedTo, inMembershipWindow } from './fragments.ts'
import { bigintArray, limitLiteral, Prisma, type Conn } from './sql.ts'
import type { WebhookEventType, WebhookScope } from './webhooks.ts'

/**
 * The outbox (decision 0272): one row per change and matching webhook, leased by workers. A queue is
 * a (webhook, conversation), or a webhook's events of no conversation (decision 0276).
 */

export type DeliveryStatus = 'PENDING' | 'DELIVERED' | 'FAILED'
/** `actorId`: who made the change when the message row does not say (a reaction). */
export type OutboxEvent = {
  conversationId: number
  seq: number
  pts: number
  type: WebhookEventType
  actorId: number | null
}

/**
 * Writes the deliveries of `events` (in the caller's transaction): for every webhook whose events
 * and conversation filter match, ALL scope always, VIEWER scope when the owner may see the message
 * as a current member (membership window, directed messages) and did not make the change. Each row
 * keeps the message as this change left it: a later edit does not rewrite an earlier delivery.
 */
export async function enqueueDeliveries(conn: Conn, events: readonly OutboxEvent[]): Promise<number> {
  const column = (pick: (e: OutboxEvent) => number | string | null) =>
    `{${events.map((e) => pick(e) ?? 'NULL').join(',')}}`
  return conn.$executeRaw`
    INSERT INTO webhook_deliveries (webhook_id, conversation_id, seq, pts, event_type, snapshot)
    SELECT w.id, e.conversation_id, e.seq, e.pts, e.event_type, json_build_object(
      'message', json_build_object('senderType', m.sender_type, 'senderId', m.sender_id,
        'senderHandle', (SELECT u.handle FROM users u WHERE u.id = m.sender_id), 'kind', m.kind, 'status', m.status,
        'content', m.content, 'mentionUserIds', m.mention_user_ids, 'mentionAll', m.mention_all),
      'reactions', CASE WHEN e.event_type = 'REACTIONS_CHANGED' THEN COALESCE((SELECT json_agg(json_build_object(
        'emoji', g.emoji, 'count', g.count) ORDER BY g.first_reacted_at) FROM message_reaction_groups g
        WHERE g.conversation_id = m.conversation_id AND g.seq = m.seq), '[]') END)
    FROM unnest(${column((e) => e.conversationId)}::bigint[], ${column((e) => e.seq)}::bigint[],
      ${column((e) => e.pts)}::bigint[], ${column((e) => e.type)}::"WebhookEventType"[],
      ${column((e) => e.actorId)}::bigint[])
      WITH ORDINALITY AS e(conversation_id, seq, pts, event_type, actor_id, n)
    JOIN messages m ON m.conversation_id = e.conversation_id AND m.seq = e.seq
    JOIN webhooks w ON e.event_type = ANY(w.events)
      AND (w.conversation_ids IS NULL OR e.conversation_id = ANY(w.conversation_ids))
    WHERE w.scope = 'ALL' OR (
      COALESCE(e.actor_id, CASE WHEN e.event_type = 'MESSAGE_RECALLED' THEN m.recalled_by_id ELSE m.sender_id END)
        IS DISTINCT FROM w.owner_id
      AND EXISTS (SELECT 1 FROM conversation_members cm
        WHERE cm.conversation_id = m.conversation_id AND cm.user_id = w.owner_id AND cm.left_at IS NULL
          AND ${inMembershipWindow} AND ${directedTo(Prisma.sql`w.owner_id`)}))
    ORDER BY e.n, w.id`
}

/** A leased delivery with what its request needs: the webhook, and the message as the change left it. */
export type ClaimedDelivery = {
  id: number
  webhookId: number
  url: string
  secret: string
  ownerId: number
  scope: WebhookScope
  eventType: WebhookEventType
  conversationId: number | null
  seq: number | null
  pts: number | null
  roundAttempts: number
  body: string | null
  createdAt: Date
  message: {
    senderType: string
    senderId: number | null
    senderHandle: string | null
    kind: string
    status: string
    content: unknown
    mentionUserIds: number[]
    mentionAll: boolean
  } | null
  /** For REACTIONS_CHANGED: the message's reactions now, by emoji. */
  reactions: { emoji: string; count: number }[] | null
  /** For an event that is not a message's (webhookEvents.ts): its body's data, and whether `pts` goes in it. */
  data: Record<string, unknown> | null
  withPts: boolean
}

/**
 * Leases up to `limit` due deliveries, each the first undelivered one of its (webhook, conversation)
 * in pts order, of an active webhook: the next one of a conversation is not taken before this one is
 * DELIVERED. SKIP LOCKED and the lease let any number of workers share the table; the lease outlives
 * an attempt's timeout, and a crashed worker's lease runs out, so the delivery is tried again.
 */
export const claimDeliveries = (conn: Conn, limit: number, leaseMs: number): Promise<ClaimedDelivery[]> =>
  lease(
    conn,
    leaseMs,
    Prisma.sql`
      SELECT d.id FROM webhook_deliveries d
      WHERE d.status = 'PENDING' AND d.next_attempt_at <= now() AND (d.leased_until IS NULL OR d.leased_until < now())
        AND EXISTS (SELECT 1 FROM webhooks w WHERE w.id = d.webhook_id AND w.active)
        AND NOT EXISTS (SELECT 1 FROM webhook_deliveries p
          WHERE p.webhook_id = d.webhook_id AND p.status <> 'DELIVERED'
            AND COALESCE(p.conversation_id, 0) = COALESCE(d.conversation_id, 0)
            AND (COALESCE(p.pts, 0), p.id) < (COALESCE(d.pts, 0), d.id))
      ORDER BY d.next_attempt_at LIMIT ${limit}
      FOR UPDATE OF d SKIP LOCKED`,
  )

/**
 * Leases the deliveries `due` selects (and locks) and returns what their requests need. `before`
 * adds CTEs ahead of it (a step's records), `guard` a condition on each leased row.
 */
async function lease(
  conn: Conn,
  leaseMs: number,
  due: Prisma.Sql,
  opts: { before?: Prisma.Sql; guard?: Prisma.Sql } = {},
): Promise<ClaimedDelivery[]> {
  const rows = await conn.$queryRaw<(ClaimedDelivery & Record<string, unknown>)[]>`
    WITH ${opts.before ?? Prisma.empty} due AS (${due})
    UPDATE webhook_deliveries d SET leased_until = now() + ${leaseMs} * interval '1 millisecond'
    FROM due JOIN webhook_deliveries x ON x.id = due.id JOIN webhooks w ON w.id = x.webhook_id
    WHERE d.id = due.id ${opts.guard ?? Prisma.empty}
    RETURNING d.id, d.webhook_id AS "webhookId", w.url, w.secret, w.owner_id AS "ownerId", w.scope::text AS scope,
      d.event_type::text AS "eventType", d.conversation_id AS "conversationId", d.seq, d.pts,
      d.round_attempts AS "roundAttempts", d.body, d.created_at AS "createdAt",
      d.snapshot -> 'message' AS message, d.snapshot -> 'reactions' AS reactions, d.snapshot -> 'data' AS data,
      COALESCE((d.snapshot ->> 'withPts')::boolean, true) AS "withPts"`
  return rows.map((r) => ({
    ...r,
    id: Number(r.id),
    webhookId: Number(r.webhookId),
    ownerId: Number(r.ownerId),
    conversationId: r.conversationId === null ? null : Number(r.conversationId),
    seq: r.seq === null ? null : Number(r.seq),
    pts: r.pts === null ? null : Number(r.pts),
  }))
}

/** What one attempt came to; `retryInMs` null means no more tries. */
export type AttemptResult =
  | { outcome: 'delivered'; statusCode: number }
  | { outcome: 'retry'; statusCode: number | null; error: string; retryInMs: number }
  | { outcome: 'failed'; statusCode: number | null; error: string; disableReason: string }

/** A posted delivery: what came of it, and the body it sent (kept for the retries). */
export type PostedDelivery = { id: number; body: string; result: AttemptResult }

/**
 * One step of a queue's run, one statement (decision 0289): records what came of the deliveries
 * posted since the last step (a FAILED one disables the webhook), gives back the leases of `release`
 * (leased, never to be posted now), and leases up to `count` more of the queue, the due ones
 * right after `after` (the last one the run holds) with no undelivered one between: the queue's
 * order is kept while the records of the ones before them have not committed yet, and no other
 * worker takes them, as the claim takes only a queue's first undelivered one.
 */
export async function recordAndLease(
  conn: Conn,
  step: {
    posted: readonly PostedDelivery[]
    release: readonly number[]
    queue: { webhookId: number; conversationId: number | null }
    after: { pts: number | null; id: number }
    count: number
    leaseMs: number
  },
): Promise<ClaimedDelivery[]> {
  const outcomes = step.posted.map(({ id, body, result }) => ({
    id,
    body,
    status: result.outcome === 'delivered' ? 'DELIVERED' : result.outcome === 'failed' ? 'FAILED' : 'PENDING',
    code: result.statusCode,
    error: result.outcome === 'delivered' ? null : result.error.slice(0, 500),
    retry_ms: result.outcome === 'retry' ? result.retryInMs : null,
  }))
  const failed = step.posted.find((p) => p.result.outcome === 'failed')?.result
  const reason = failed?.outcome === 'failed' ? failed.disableReason.slice(0, 500) : null
  const { webhookId } = step.queue
  const conversationId = step.queue.conversationId ?? 0
  const after = Prisma.sql`(${step.after.pts ?? 0}::bigint, ${step.after.id}::bigint)`
  const position = (row: string) => Prisma.raw(`(COALESCE(${row}.pts, 0), ${row}.id)`)
  const inQueue = (row: string) =>
    Prisma.sql`${Prisma.raw(row)}.webhook_id = ${webhookId}::bigint
      AND COALESCE(${Prisma.raw(row)}.conversation_id, 0) = ${conversationId}::bigint`
  return lease(
    conn,
    step.leaseMs,
    step.count > 0
      ? Prisma.sql`
        SELECT d.id FROM webhook_deliveries d
        WHERE ${inQueue('d')} AND d.status = 'PENDING' AND ${position('d')} > ${after}
          AND d.next_attempt_at <= now() AND (d.leased_until IS NULL OR d.leased_until < now())
          AND EXISTS (SELECT 1 FROM webhooks w WHERE w.id = d.webhook_id AND w.active)
        ORDER BY COALESCE(d.pts, 0), d.id LIMIT ${limitLiteral(step.count)}
        FOR UPDATE OF d SKIP LOCKED`
      : Prisma.sql`SELECT NULL::bigint AS id WHERE false`,
    {
      before: Prisma.sql`
        o AS (SELECT * FROM json_to_recordset(${JSON.stringify(outcomes)}::json)
          AS o(id bigint, body text, status text, code int, error text, retry_ms float8)),
        recorded AS (
          UPDATE webhook_deliveries r SET status = o.status::"WebhookDeliveryStatus", attempts = r.attempts + 1,
            round_attempts = r.round_attempts + 1, last_status_code = o.code, last_error = o.error,
            next_attempt_at = now() + o.retry_ms * interval '1 millisecond', leased_until = NULL,
            body = COALESCE(r.body, o.body), delivered_at = CASE WHEN o.status = 'DELIVERED' THEN now() END
          FROM o WHERE r.id = o.id),
        disabled AS (
          UPDATE webhooks SET active = false, disabled_reason = ${reason}::text
          WHERE ${reason}::text IS NOT NULL AND id = ${webhookId}::bigint),
        released AS (
          UPDATE webhook_deliveries SET leased_until = NULL
          WHERE id = ANY(${bigintArray(step.release)}) AND status = 'PENDING'),`,
      // A row SKIP LOCKED passed over (or one not yet due) leaves a gap: nothing after it is leased.
      guard: Prisma.sql`AND NOT EXISTS (SELECT 1 FROM webhook_deliveries g
        WHERE ${inQueue('g')} AND g.status <> 'DELIVERED' AND ${position('g')} > ${after}
          AND ${position('g')} < ${position('d')} AND g.id NOT IN (SELECT id FROM due))`,
    },
  )
}
