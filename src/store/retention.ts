import { Prisma, bigintArray, type Conn } from './sql.ts'

/** setRetention: null returns the conversation to the server default. */
export async function updateRetention(conn: Conn, conversationId: number, seconds: number | null): Promise<void> {
  await conn.$executeRaw`UPDATE conversations SET retention_seconds = ${seconds}::int WHERE id = ${conversationId}`
}

export async function updateLegalHold(conn: Conn, conversationId: number, hold: boolean): Promise<void> {
  await conn.$executeRaw`UPDATE conversations SET legal_hold = ${hold} WHERE id = ${conversationId}`
}

/** The retention that applies to `c`: its own, else the server default (a parameter; null keeps all). */
const retentionOf = (defaultSeconds: number | null) => Prisma.sql`coalesce(c.retention_seconds, ${defaultSeconds}::int)`

/**
 * Conversations after `afterId` (in id order, at most `limit`) whose oldest kept message has
 * expired and that are not on legal hold: one index probe per conversation for its oldest message.
 */
export async function findExpiredConversations(
  conn: Conn,
  opts: { defaultSeconds: number | null; afterId: number; limit: number },
): Promise<number[]> {
  const rows = await conn.$queryRaw<{ id: bigint }[]>`
    SELECT c.id FROM conversations c
    WHERE c.id > ${opts.afterId} AND NOT c.legal_hold AND ${retentionOf(opts.defaultSeconds)} IS NOT NULL
      AND c.retained_from_seq <= c.last_seq
      AND (SELECT m.sent_at FROM messages m WHERE m.conversation_id = c.id AND m.seq >= c.retained_from_seq
        ORDER BY m.seq LIMIT 1) < now() - make_interval(secs => ${retentionOf(opts.defaultSeconds)})
    ORDER BY c.id LIMIT ${opts.limit}`
  return rows.map((r) => Number(r.id))
}

/** What the sweeper holds of a conversation while it deletes a batch. */
export type SweptConversation = { retainedFromSeq: number; lastSeq: number; seconds: number }

/** The first key of the sweeper's advisory locks (the second is the conversation): no other code uses this one. */
const SWEEP_LOCK_SPACE = 4_500_045

/**
 * Claims the conversation for this sweeper (a transaction-scoped advisory lock: another instance
 * sweeping it now makes this one move on, null) and then locks its row, the lock every write of its
 * messages takes, waiting for a send that holds it (a few milliseconds; skipping instead would never
 * sweep a busy conversation). Null too when it is on legal hold or keeps everything.
 */
export async function lockForSweep(
  conn: Conn,
  conversationId: number,
  defaultSeconds: number | null,
): Promise<SweptConversation | null> {
  const [claim] = await conn.$queryRaw<{ claimed: boolean }[]>`
    SELECT pg_try_advisory_xact_lock(${SWEEP_LOCK_SPACE}::int, ${conversationId}::int) AS claimed`
  if (!claim!.claimed) return null
  const rows = await conn.$queryRaw<{ retainedFromSeq: bigint; lastSeq: bigint; seconds: number | null }[]>`
    SELECT c.retained_from_seq AS "retainedFromSeq", c.last_seq AS "lastSeq", ${retentionOf(defaultSeconds)} AS seconds
    FROM conversations c WHERE c.id = ${conversationId} AND NOT c.legal_hold
    FOR NO KEY UPDATE`
  const row = rows[0]
  if (!row || row.seconds === null) return null
  return { retainedFromSeq: Number(row.retainedFromSeq), lastSeq: Number(row.lastSeq), seconds: row.seconds }
}

/** The tables holding rows of a message, each deleted with it (message_reports cascade). */
const DEPENDENTS = [
  'message_edits',
  'message_user_actions',
  'message_search',
  'pinned_messages',
  'message_reactions',
  'message_reaction_groups',
  'webhook_deliveries',
]

/**
 * Deletes the expired messages among the next `batch` seqs from retained_from_seq, with every row
 * hanging off them, and moves retained_from_seq past them, in one statement under the sweep's lock.
 * Only a prefix goes: the batch ends before the first message that has not expired, so
 * retained_from_seq stays "every message before it is gone" but for thread roots (decision 0292): a
 * root whose thread has a reply after the batch loses its content and everything hanging off it
 * like a purged recall (status RECALLED, no recalledBy, the next pts) and keeps its row, its thread
 * row and its followers; it goes in the batch that deletes its last reply. Returns how many
 * messages went, whether retained_from_seq moved, and the attachments they carried (others may
 * still carry them).
 */
export async function deleteExpiredBatch(
  conn: Conn,
  conversationId: number,
  swept: SweptConversation,
  batch: number,
): Promise<{ deleted: number; advanced: boolean; attachmentIds: number[] }> {
  const lo = swept.retainedFromSeq
  const doomed = Prisma.sql`(x.seq BETWEEN b.lo AND b.hi AND x.seq <> ALL(t.kept) OR x.seq = ANY(t.ended))`
  const inBatch = (table: string) =>
    Prisma.sql`DELETE FROM ${Prisma.raw(table)} x USING b, t WHERE x.conversation_id = ${conversationId} AND (x.seq BETWEEN b.lo AND b.hi OR x.seq = ANY(t.ended))`
  const dependents = DEPENDENTS.map((table, i) => Prisma.sql`d${Prisma.raw(String(i))} AS (${inBatch(table)}),`)
  const rows = await conn.$queryRaw<{ deleted: number; advanced: boolean; attachmentIds: bigint[] }[]>`
    WITH b AS (
      SELECT ${lo}::bigint AS lo, coalesce(
        (SELECT min(m.seq) FROM messages m WHERE m.conversation_id = ${conversationId} AND m.seq >= ${lo}
          AND m.seq < ${lo + batch} AND m.sent_at >= now() - make_interval(secs => ${swept.seconds})) - 1,
        least(${lo + batch - 1}::bigint, ${swept.lastSeq}::bigint)) AS hi),
    t AS (SELECT
      -- Roots of the batch whose thread goes on after it: tombstones.
      ARRAY(SELECT r.root_seq FROM message_threads r WHERE r.conversation_id = ${conversationId}
        AND r.root_seq BETWEEN b.lo AND b.hi AND r.last_reply_seq > b.hi ORDER BY r.root_seq) AS kept,
      -- Tombstones of earlier batches whose last reply goes in this one.
      ARRAY(SELECT DISTINCT m.thread_root_seq FROM messages m
        JOIN message_threads r ON r.conversation_id = m.conversation_id AND r.root_seq = m.thread_root_seq
        WHERE m.conversation_id = ${conversationId} AND m.seq BETWEEN b.lo AND b.hi AND m.thread_root_seq < b.lo
          AND r.last_reply_seq <= b.hi) AS ended
      FROM b),
    ${Prisma.join(dependents, ' ')}
    attached AS (${inBatch('message_attachments')} RETURNING x.attachment_id),
    gone AS (DELETE FROM messages x USING b, t WHERE x.conversation_id = ${conversationId} AND ${doomed} RETURNING x.seq),
    erased AS (
      UPDATE messages x SET status = 'RECALLED', content = 'null'::jsonb, recalled_at = coalesce(x.recalled_at, now()),
        pts = c.last_pts + k.n
      FROM t, conversations c, unnest(t.kept) WITH ORDINALITY k(seq, n)
      WHERE c.id = ${conversationId} AND x.conversation_id = ${conversationId} AND x.seq = k.seq),
    moved AS (
      UPDATE conversations c SET retained_from_seq = b.hi + 1, last_pts = c.last_pts + cardinality(t.kept)
      FROM b, t WHERE c.id = ${conversationId} AND b.hi >= b.lo)
    SELECT (SELECT count(*) FROM gone)::int AS deleted, (SELECT hi >= lo FROM b) AS advanced,
      ARRAY(SELECT DISTINCT attachment_id FROM attached) AS "attachmentIds"`
  const row = rows[0]!
  return { deleted: row.deleted, advanced: row.advanced, attachmentIds: row.attachmentIds.map(Number) }
}

/** Of `ids`, the attachments no message carries and no saved sticker keeps any more, locked (SKIP LOCKED) for removal. */
export async function lockUncarriedAttachments(conn: Conn, ids: readonly number[]): Promise<number[]> {
  const rows = await conn.$queryRaw<{ id: bigint }[]>`
    SELECT a.id FROM attachments a
    WHERE a.id = ANY(${bigintArray(ids)}) AND NOT EXISTS (SELECT 1 FROM message_attachments ma WHERE ma.attachment_id = a.id)
      AND NOT EXISTS (SELECT 1 FROM saved_stickers s WHERE s.attachment_id = a.id)
    FOR UPDATE SKIP LOCKED`
  return rows.map((r) => Number(r.id))
}

/** The conversation's current members (whom a sweep or a setting change concerns). */
export async function currentMemberIds(conn: Conn, conversationId: number): Promise<number[]> {
  const rows = await conn.$queryRaw<{ userId: bigint }[]>`
    SELECT user_id AS "userId" FROM conversation_members WHERE conversation_id = ${conversationId} AND left_at IS NULL`
  return rows.map((r) => Number(r.userId))
}
