import type { MessageKey } from '../domain/core/index.ts'
import { toMessage, type MessageRecord, type MessageRow } from './records.ts'
import { queryPooled } from './pooled.ts'
import { MESSAGE_COLUMNS, membershipOf, notRecalled, visibleTo, visibleToUser, type Reader } from './fragments.ts'
import { Prisma, bigintArray, planIndependent, type Conn } from './sql.ts'

/** Threads (docs/threads.md): summaries, the viewer's follow and read position, the followed list. */

/** A thread's summary as one reader sees it: only the replies that reader may see count. */
export type ThreadSummaryRecord = MessageKey & {
  replyCount: number
  lastReplyAt: Date | null
  /** Repliers, the most recent first, at most 5. */
  participantIds: number[]
  following: boolean
  lastReadSeq: number
  /** Others' replies after the read position (not SYSTEM, not recalled), following or not. */
  unread: number
}

/** The reader's unread replies of root `r` after the read position `f.last_read_seq` (no row: 0). */
const unreadReply = (userId: number | Prisma.Sql) => Prisma.sql`m.seq > coalesce(f.last_read_seq, 0)
  AND m.sender_type <> 'SYSTEM' AND m.sender_id <> ${userId} AND ${notRecalled}`

/**
 * The summaries of the threads of `roots` that have a reply, in one statement for a page of roots: a
 * root without one costs a lookup of its thread row; one with replies, a scan of its replies on the
 * thread replies index (visibility per reply: membership window, directed, delete-for-me).
 */
export async function findThreadSummaries(
  conn: Conn,
  reader: Reader,
  roots: readonly MessageKey[],
): Promise<ThreadSummaryRecord[]> {
  const rows = await queryPooled<{
    conversationId: number | bigint
    seq: number | bigint
    replyCount: number
    lastReplyAt: Date | null
    participantIds: (number | string)[] | null
    following: boolean | null
    lastReadSeq: number | bigint | null
    unread: number
  }>(
    conn,
    Prisma.sql`
    SELECT t.conversation_id AS "conversationId", t.root_seq AS seq, s."replyCount", s."lastReplyAt", s.unread,
      p.ids AS "participantIds", f.following, f.last_read_seq AS "lastReadSeq"
    FROM unnest(${bigintArray(roots.map((k) => k.conversationId))}, ${bigintArray(roots.map((k) => k.seq))}) AS k(conversation_id, seq)
    JOIN message_threads t ON t.conversation_id = k.conversation_id AND t.root_seq = k.seq
    JOIN conversation_members cm ON cm.conversation_id = t.conversation_id AND cm.user_id = ${reader.userId} AND cm.left_at IS NULL
    LEFT JOIN thread_followers f ON f.conversation_id = t.conversation_id AND f.root_seq = t.root_seq AND f.user_id = cm.user_id
    CROSS JOIN LATERAL (
      SELECT count(*)::int AS "replyCount", max(m.sent_at) AS "lastReplyAt",
        count(*) FILTER (WHERE ${unreadReply(reader.userId)})::int AS unread
      FROM messages m WHERE m.conversation_id = t.conversation_id AND m.thread_root_seq = t.root_seq AND ${visibleTo(reader)}) s
    CROSS JOIN LATERAL (
      SELECT array_agg(r.sender_id ORDER BY r.last DESC) AS ids FROM (
        SELECT m.sender_id, max(m.seq) AS last FROM messages m
        WHERE m.conversation_id = t.conversation_id AND m.thread_root_seq = t.root_seq AND m.sender_id IS NOT NULL AND ${visibleTo(reader)}
        GROUP BY m.sender_id ORDER BY last DESC LIMIT 5) r) p
    WHERE s."replyCount" > 0`,
  )
  return rows.map((r) => ({
    conversationId: Number(r.conversationId),
    seq: Number(r.seq),
    replyCount: r.replyCount,
    lastReplyAt: r.lastReplyAt === null ? null : new Date(r.lastReplyAt),
    participantIds: (r.participantIds ?? []).map(Number),
    following: r.following ?? false,
    lastReadSeq: Number(r.lastReadSeq ?? 0),
    unread: r.unread,
  }))
}

/** The roots of the threads the user follows in one conversation (a replay's alerts). */
export async function findFollowedRoots(conn: Conn, userId: number, conversationId: number): Promise<Set<number>> {
  const rows = await queryPooled<{ seq: number | bigint }>(
    conn,
    Prisma.sql`SELECT root_seq AS seq FROM thread_followers
    WHERE user_id = ${userId} AND conversation_id = ${conversationId} AND following`,
  )
  return new Set(rows.map((r) => Number(r.seq)))
}

/** The newest reply's seq of a thread (0: none). */
export async function findLastReplySeq(conn: Conn, root: MessageKey): Promise<number> {
  const rows = await conn.$queryRaw<{ seq: bigint }[]>`
    SELECT last_reply_seq AS seq FROM message_threads WHERE conversation_id = ${root.conversationId} AND root_seq = ${root.seq}`
  return rows[0] ? Number(rows[0].seq) : 0
}

/** A user's thread row after a change; `changed`: whether the statement changed it. */
export type ThreadStateChange = { following: boolean; lastReadSeq: number; changed: boolean }

/**
 * Sets whether the user follows the thread (a row of their own, kept with its read position).
 * `changed` is false when it already was so.
 */
export async function setFollowing(
  conn: Conn,
  root: MessageKey,
  userId: number,
  following: boolean,
): Promise<ThreadStateChange> {
  return upsertState(
    conn,
    Prisma.sql`INSERT INTO thread_followers (conversation_id, root_seq, user_id, following)
    VALUES (${root.conversationId}, ${root.seq}, ${userId}, ${following})
    ON CONFLICT (conversation_id, root_seq, user_id) DO UPDATE SET following = EXCLUDED.following, updated_at = clock_timestamp()
      WHERE thread_followers.following <> EXCLUDED.following`,
    root,
    userId,
  )
}

/**
 * Moves the user's thread read position to `seq` only if that is further on (a conditional upsert,
 * monotonic under concurrency by the row lock alone). A new row follows when the user is the root's
 * sender (the root's sender follows its thread), else not.
 */
export async function advanceThreadRead(
  conn: Conn,
  root: MessageKey & { senderId: number | null },
  userId: number,
  seq: number,
): Promise<ThreadStateChange> {
  return upsertState(
    conn,
    Prisma.sql`INSERT INTO thread_followers (conversation_id, root_seq, user_id, following, last_read_seq)
    VALUES (${root.conversationId}, ${root.seq}, ${userId}, ${root.senderId === userId}, ${seq})
    ON CONFLICT (conversation_id, root_seq, user_id) DO UPDATE SET last_read_seq = EXCLUDED.last_read_seq, updated_at = clock_timestamp()
      WHERE thread_followers.last_read_seq < EXCLUDED.last_read_seq`,
    root,
    userId,
  )
}

/** Runs a conditional upsert of the user's thread row, then reads the row as it is now. */
async function upsertState(
  conn: Conn,
  upsert: Prisma.Sql,
  root: MessageKey,
  userId: number,
): Promise<ThreadStateChange> {
  const rows = await conn.$queryRaw<{ following: boolean; lastReadSeq: bigint; changed: boolean }[]>`
    WITH changed AS (${upsert} RETURNING following, last_read_seq)
    SELECT following, last_read_seq AS "lastReadSeq", true AS changed FROM changed
    UNION ALL
    SELECT following, last_read_seq, false FROM thread_followers
    WHERE conversation_id = ${root.conversationId} AND root_seq = ${root.seq} AND user_id = ${userId}
      AND NOT EXISTS (SELECT FROM changed)`
  const row = rows[0]!
  return { following: row.following, lastReadSeq: Number(row.lastReadSeq), changed: row.changed }
}

/** Where a page of Viewer.threads starts after: the previous thread's last reply time and root. */
export type ThreadPosition = { lastReplyAt: Date; conversationId: number; seq: number }

/**
 * A page of the roots of the threads the user follows in conversations they are in, latest reply
 * first, each root as the user may see it; `unreadOnly`: only threads with a reply the user has not read.
 */
export async function listFollowedThreads(
  conn: Conn,
  reader: Reader,
  opts: { after: ThreadPosition | null; limit: number; unreadOnly: boolean },
): Promise<(MessageRecord & { lastReplyAt: Date })[]> {
  const { after } = opts
  const rows = await queryPooled<MessageRow & { lastReplyAt: Date }>(
    conn,
    Prisma.sql`
    SELECT ${MESSAGE_COLUMNS}, t.last_reply_at AS "lastReplyAt"
    FROM thread_followers f
    JOIN message_threads t ON t.conversation_id = f.conversation_id AND t.root_seq = f.root_seq
    JOIN messages m ON m.conversation_id = f.conversation_id AND m.seq = f.root_seq
    ${membershipOf(Prisma.sql`f.user_id`)}
    WHERE f.user_id = ${planIndependent(reader.userId)} AND f.following AND ${visibleTo(reader)}
      ${after ? Prisma.sql`AND (t.last_reply_at, t.conversation_id, t.root_seq) < (${after.lastReplyAt}, ${after.conversationId}, ${after.seq})` : Prisma.empty}
      ${
        opts.unreadOnly
          ? Prisma.sql`AND EXISTS (SELECT FROM messages m WHERE m.conversation_id = f.conversation_id AND m.thread_root_seq = f.root_seq
              AND ${unreadReply(Prisma.sql`f.user_id`)} AND ${visibleToUser(Prisma.sql`f.user_id`)})`
          : Prisma.empty
      }
    ORDER BY t.last_reply_at DESC, t.conversation_id DESC, t.root_seq DESC
    LIMIT ${opts.limit}`,
  )
  return rows.map((r) => ({ ...toMessage(r), lastReplyAt: new Date(r.lastReplyAt) }))
}
