import type { MessageKey } from '../domain/core/index.ts'
import { toUser, type UserRecord } from './records.ts'
import { queryPooled } from './pooled.ts'
import {
  USER_COLUMNS,
  deletedForUser,
  directedTo,
  inConversation,
  inMembershipWindow,
  membershipsAmong,
  notRecalled,
  type Reader,
} from './fragments.ts'
import { Prisma, bigintArray, planIndependent, type Conn } from './sql.ts'

/**
 * Moves the member's read position to `seq` only if that is further on, in one conditional UPDATE:
 * concurrent calls stay monotonic through the member row lock alone (the conversation row is not
 * locked). Null when the position did not move (already there or beyond, or not a current member).
 */
export async function advanceReadPosition(
  conn: Conn,
  conversationId: number,
  userId: number,
  seq: number,
): Promise<{ lastReadSeq: number; lastReadAt: Date } | null> {
  const rows = await conn.$queryRaw<{ lastReadSeq: bigint; lastReadAt: Date }[]>`
    UPDATE conversation_members SET last_read_seq = ${seq}, last_read_at = clock_timestamp()
    WHERE conversation_id = ${conversationId} AND user_id = ${userId} AND left_at IS NULL AND last_read_seq < ${seq}
    RETURNING last_read_seq AS "lastReadSeq", last_read_at AS "lastReadAt"`
  return rows[0] ? { lastReadSeq: Number(rows[0].lastReadSeq), lastReadAt: rows[0].lastReadAt } : null
}

export type UnreadCounts = { unread: number; mentioned: number }

/**
 * The messages an unread count may leave out or a mention count looks at, as the partial index
 * messages_unread_exceptions_idx lists them: SYSTEM, recalled, directed, mentioning anyone, thread
 * replies outside the conversation.
 */
const EXCEPTION = Prisma.sql`(m.sender_type = 'SYSTEM' OR m.status = 'RECALLED' OR cardinality(m.visible_to) > 0 OR m.mention_all
  OR cardinality(m.mention_user_ids) > 0 OR NOT m.in_conversation)`

/**
 * Per membership `cm` (its user is the reader): the unread messages of others the reader may see (not
 * SYSTEM notices, though a host's text or card posted as SYSTEM counts; not recalled, not a thread reply outside the conversation, after the read position, inside the membership window, directed to them if
 * directed, not deleted for them), and how many of them mention the reader or everyone. Counted by
 * exception (decision 0263), so the cost does not grow with the unread messages: seqs are allocated
 * without gaps up to `last_seq` (and deleted only below `retained_from_seq`), so the window after the position holds `last_seq - lo + 1` messages,
 * less those the rule leaves out, which can only be EXCEPTION messages (read from their partial
 * index) or the reader's deletions (from theirs). The reader's own messages are never in the window:
 * a send moves its sender's position to it in the same statement (appendMessagesTo) and positions
 * never move back. It names the reader only as `cm.user_id`, so the statement around it decides what
 * its plan depends on.
 */
const unreadOf = Prisma.sql`
  CROSS JOIN LATERAL (
    SELECT (greatest(0, w.last_seq - w.lo + 1) - x.left_out)::int AS unread, x.mentioned::int AS mentioned
    -- The conversation's counter as a lookup per membership (OFFSET 0 keeps it one): never a join
    -- the planner could turn into a scan of every conversation. Seqs before retained_from_seq were
    -- deleted by the retention sweeper: the window starts after them.
    FROM (SELECT greatest(cm.last_read_seq + 1, cm.visible_from_seq, c.retained_from_seq) AS lo, c.last_seq
      FROM conversations c WHERE c.id = cm.conversation_id OFFSET 0) w
    CROSS JOIN LATERAL (
      SELECT count(*) FILTER (WHERE NOT e.counted) AS left_out, count(*) FILTER (WHERE e.counted AND e.mentions) AS mentioned
      FROM (
        SELECT coalesce(m.kind <> 'SYSTEM' AND m.sender_id IS DISTINCT FROM cm.user_id AND ${notRecalled} AND ${inConversation}
            AND ${directedTo(Prisma.sql`cm.user_id`)}
            AND NOT EXISTS (${deletedForUser(Prisma.sql`cm.user_id`)}), false) AS counted,
          (m.mention_all OR cm.user_id = ANY(m.mention_user_ids)) AS mentions
        FROM messages m
        WHERE m.conversation_id = cm.conversation_id AND m.seq >= w.lo AND m.seq <= w.last_seq AND ${EXCEPTION}
        UNION ALL
        -- Deleted messages that are not EXCEPTION ones (those the branch above judged).
        SELECT false, false FROM message_user_actions ua
        WHERE ua.user_id = cm.user_id AND ua.conversation_id = cm.conversation_id AND ua.action = 'DELETE' AND ua.status = 'ACTIVE'
          AND ua.seq >= w.lo AND ua.seq <= w.last_seq
          AND NOT EXISTS (SELECT FROM messages m WHERE m.conversation_id = ua.conversation_id AND m.seq = ua.seq AND ${EXCEPTION})) e
      -- Nothing after the position (a read conversation): no index is probed.
      WHERE w.lo <= w.last_seq) x) counts`

/** Unread counts for the reader's current memberships among `conversationIds` (one statement for an inbox page). */
export async function countUnread(
  conn: Conn,
  reader: Reader,
  conversationIds: readonly number[],
): Promise<(UnreadCounts & { conversationId: number })[]> {
  // Through the pool, like the page's other reads (an inbox page's 50 rows).
  const rows = await queryPooled<UnreadCounts & { conversationId: number | bigint }>(
    conn,
    Prisma.sql`
    SELECT cm.conversation_id AS "conversationId", counts.unread, counts.mentioned
    FROM ${membershipsAmong(reader.userId, conversationIds)} ${unreadOf}`,
  )
  return rows.map((r) => ({ conversationId: Number(r.conversationId), unread: r.unread, mentioned: r.mentioned }))
}

/**
 * Viewer.unreadTotal: the unread counts of the reader's current conversations that are not in
 * do-not-disturb, where a conversation marked unread with nothing unread counts 1.
 */
export async function countUnreadTotal(conn: Conn, reader: Reader): Promise<number> {
  const rows = await queryPooled<{ total: number }>(
    conn,
    Prisma.sql`SELECT ${unreadTotal} AS total ${unreadTotalOf(Prisma.sql`cm.user_id = ${planIndependent(reader.userId)}`)}`,
  )
  return rows[0]!.total
}

/**
 * The sum and the memberships it runs over, for the readers `cm.user_id` that `readers` picks. The
 * member's settings row is looked up per membership, as the counter is (see unreadOf): the plan is
 * the same for a viewer in 10 conversations and in 10,000, and PostgreSQL keeps it.
 */
const unreadTotal = Prisma.sql`coalesce(sum(CASE WHEN counts.unread > 0 THEN counts.unread WHEN cs.marked_unread THEN 1 ELSE 0 END), 0)::int`
const unreadTotalOf = (readers: Prisma.Sql) => Prisma.sql`
    FROM conversation_members cm
    LEFT JOIN LATERAL (SELECT cs.marked_unread, cs.do_not_disturb_until FROM conversation_settings cs
      WHERE cs.conversation_id = cm.conversation_id AND cs.user_id = cm.user_id OFFSET 0) cs ON true ${unreadOf}
    WHERE ${readers} AND cm.left_at IS NULL
      AND (cs.do_not_disturb_until IS NULL OR cs.do_not_disturb_until <= clock_timestamp())`

/** Viewer.unreadTotal of many readers in one statement (push badges); a reader with nothing unread is left out. */
export async function countUnreadTotals(conn: Conn, userIds: readonly number[]): Promise<Map<number, number>> {
  const rows = await conn.$queryRaw<{ userId: bigint; total: number }[]>`
    SELECT cm.user_id AS "userId", ${unreadTotal} AS total
    ${unreadTotalOf(Prisma.sql`cm.user_id = ANY(${bigintArray(userIds)})`)}
    GROUP BY cm.user_id`
  return new Map(rows.map((r) => [Number(r.userId), r.total]))
}

/**
 * The audience `cm` of message `m` for receipts: current members other than the sender who can see
 * the message by its own rules (joined at or before it under JOINED history; named by a directed
 * message). Delete-for-me does not take anyone out: it is the member's private action.
 */
const audienceOf = Prisma.sql`
  cm.conversation_id = m.conversation_id AND cm.left_at IS NULL AND cm.user_id <> m.sender_id
  AND ${inMembershipWindow} AND ${directedTo(Prisma.sql`cm.user_id`)}`

export type ReceiptCounts = MessageKey & { read: number; unread: number }

/** Read and unread audience counts for messages of `senderId` (one statement for a page of them). */
export async function countReceipts(
  conn: Conn,
  senderId: number,
  keys: readonly MessageKey[],
): Promise<ReceiptCounts[]> {
  const rows = await queryPooled<{
    conversationId: number | bigint
    seq: number | bigint
    read: number
    unread: number
  }>(
    conn,
    Prisma.sql`
    SELECT m.conversation_id AS "conversationId", m.seq,
      count(cm.user_id) FILTER (WHERE cm.last_read_seq >= m.seq)::int AS read,
      count(cm.user_id) FILTER (WHERE cm.last_read_seq < m.seq)::int AS unread
    FROM unnest(${bigintArray(keys.map((k) => k.conversationId))}, ${bigintArray(keys.map((k) => k.seq))}) AS k(conversation_id, seq)
    JOIN messages m ON m.conversation_id = k.conversation_id AND m.seq = k.seq AND m.sender_id = ${senderId}
    LEFT JOIN conversation_members cm ON ${audienceOf}
    GROUP BY m.conversation_id, m.seq`,
  )
  return rows.map((r) => ({
    conversationId: Number(r.conversationId),
    seq: Number(r.seq),
    read: r.read,
    unread: r.unread,
  }))
}

/** User ids of a page of the audience of one message of `senderId` that has (or has not) read it, ascending. */
export async function listReceiptReaders(
  conn: Conn,
  senderId: number,
  key: MessageKey,
  opts: { read: boolean; afterUserId: number; limit: number },
): Promise<UserRecord[]> {
  const rows = await conn.$queryRaw<Parameters<typeof toUser>[0][]>`
    SELECT ${USER_COLUMNS}
    FROM messages m JOIN conversation_members cm ON ${audienceOf} JOIN users u ON u.id = cm.user_id
    WHERE m.conversation_id = ${key.conversationId} AND m.seq = ${key.seq} AND m.sender_id = ${senderId}
      AND (cm.last_read_seq >= m.seq) = ${opts.read} AND cm.user_id > ${opts.afterUserId}
    ORDER BY cm.user_id LIMIT ${opts.limit}`
  return rows.map(toUser)
}
