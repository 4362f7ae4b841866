import { Prisma, bigintArray, type Conn } from './sql.ts'

export type WebhookEventType =
  | 'MESSAGE_ADDED'
  | 'MESSAGE_EDITED'
  | 'MESSAGE_RECALLED'
  | 'MESSAGE_STREAM_ENDED'
  | 'REACTIONS_CHANGED'
  | 'MEMBERSHIP_CHANGED'
  | 'CARD_ACTION'
  | 'FRIENDSHIP_CHANGED'
export type WebhookScope = 'VIEWER' | 'ALL'

/** A webhook as stored; `secret` is the sealed form (domain/webhooks/secrets.ts). */
export type WebhookRecord = {
  id: number
  ownerId: number
  url: string
  events: WebhookEventType[]
  scope: WebhookScope
  conversationIds: number[] | null
  secret: string
  active: boolean
  disabledReason: string | null
  createdAt: Date
}

const COLUMNS = Prisma.sql`w.id, w.owner_id AS "ownerId", w.url, w.events::text[] AS events, w.scope::text AS scope,
  w.conversation_ids AS "conversationIds", w.secret, w.active, w.disabled_reason AS "disabledReason", w.created_at AS "createdAt"`
type Row = Omit<WebhookRecord, 'id' | 'ownerId' | 'conversationIds'> & {
  id: bigint
  ownerId: bigint
  conversationIds: bigint[] | null
}
const toWebhook = (r: Row): WebhookRecord => ({
  ...r,
  id: Number(r.id),
  ownerId: Number(r.ownerId),
  conversationIds: r.conversationIds?.map(Number) ?? null,
})

const eventsArray = (events: readonly WebhookEventType[]) =>
  Prisma.sql`${`{${events.join(',')}}`}::"WebhookEventType"[]`

export async function countWebhooks(conn: Conn, ownerId: number): Promise<number> {
  const [row] = await conn.$queryRaw<{ n: bigint }[]>`SELECT count(*) AS n FROM webhooks WHERE owner_id = ${ownerId}`
  return Number(row!.n)
}

export async function insertWebhook(
  conn: Conn,
  w: Pick<WebhookRecord, 'ownerId' | 'url' | 'events' | 'scope' | 'conversationIds' | 'secret'>,
): Promise<WebhookRecord> {
  const [row] = await conn.$queryRaw<Row[]>`
    INSERT INTO webhooks AS w (owner_id, url, events, scope, conversation_ids, secret)
    VALUES (${w.ownerId}, ${w.url}, ${eventsArray(w.events)}, ${w.scope}::"WebhookScope",
      ${w.conversationIds ? bigintArray(w.conversationIds) : Prisma.sql`NULL`}, ${w.secret})
    RETURNING ${COLUMNS}`
  return toWebhook(row!)
}

/**
 * The owner's webhook `id`, locked for a change when `forUpdate` (NO KEY: the outbox rows sends
 * insert meanwhile only share-lock its key).
 */
export async function findWebhook(conn: Conn, ownerId: number, id: number, forUpdate = false) {
  const [row] = await conn.$queryRaw<Row[]>`
    SELECT ${COLUMNS} FROM webhooks w WHERE w.id = ${id} AND w.owner_id = ${ownerId}
    ${forUpdate ? Prisma.sql`FOR NO KEY UPDATE` : Prisma.empty}`
  return row ? toWebhook(row) : null
}

/** The owner's webhooks, oldest first. */
export async function listWebhooks(conn: Conn, ownerId: number): Promise<WebhookRecord[]> {
  const rows = await conn.$queryRaw<
    Row[]
  >`SELECT ${COLUMNS} FROM webhooks w WHERE w.owner_id = ${ownerId} ORDER BY w.id`
  return rows.map(toWebhook)
}

/**
 * Changes url, events, active or the sealed secret. Turning a webhook on clears its reason and puts its
 * FAILED deliveries back in line, with a fresh retry schedule, ahead of the pending ones after them.
 */
export async function updateWebhook(
  conn: Conn,
  id: number,
  change: { url?: string; events?: readonly WebhookEventType[]; active?: boolean; secret?: string },
): Promise<WebhookRecord> {
  const sets = [
    change.url === undefined ? null : Prisma.sql`url = ${change.url}`,
    change.events === undefined ? null : Prisma.sql`events = ${eventsArray(change.events)}`,
    change.secret === undefined ? null : Prisma.sql`secret = ${change.secret}`,
    change.active === undefined ? null : Prisma.sql`active = ${change.active}, disabled_reason = NULL`,
  ].filter((s) => s !== null)
  if (change.active)
    await conn.$executeRaw`
      UPDATE webhook_deliveries SET status = 'PENDING', round_attempts = 0, next_attempt_at = now()
      WHERE webhook_id = ${id} AND status = 'FAILED'`
  const [row] = await conn.$queryRaw<Row[]>`
    UPDATE webhooks w SET ${sets.length ? Prisma.join(sets) : Prisma.sql`id = id`} WHERE w.id = ${id} RETURNING ${COLUMNS}`
  return toWebhook(row!)
}

export async function deleteWebhook(conn: Conn, ownerId: number, id: number): Promise<boolean> {
  return (await conn.$executeRaw`DELETE FROM webhooks WHERE id = ${id} AND owner_id = ${ownerId}`) > 0
}
