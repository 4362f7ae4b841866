import type { MessageKey } from '../domain/core/index.ts'
import { changeWithPts, oneMessage } from './lifecycle.ts'
import { notRecalled } from './fragments.ts'
import type { MessageRecord, UserRecord } from './records.ts'
import { queryPooled } from './pooled.ts'
import { Prisma, bigintArray, type Conn } from './sql.ts'

export type ReactionGroupRecord = MessageKey & {
  emoji: string
  count: number
  firstReactedAt: Date
  viewerReacted: boolean
}
type Reaction = MessageKey & { emoji: string; userId: number }

const oneReaction = (r: Reaction) =>
  Prisma.sql`conversation_id = ${r.conversationId} AND seq = ${r.seq} AND emoji = ${r.emoji}`

/** What the limits need, in one statement under the caller's lock: the user's emoji on the message and the message's distinct emoji. */
export async function findReactionState(
  conn: Conn,
  key: MessageKey,
  userId: number,
): Promise<{ mine: string[]; emoji: string[] }> {
  const [row] = await conn.$queryRaw<{ mine: string[]; emoji: string[] }[]>`
    SELECT
      ARRAY(SELECT r.emoji FROM message_reactions r WHERE r.conversation_id = ${key.conversationId} AND r.seq = ${key.seq} AND r.user_id = ${userId}) AS mine,
      ARRAY(SELECT g.emoji FROM message_reaction_groups g WHERE g.conversation_id = ${key.conversationId} AND g.seq = ${key.seq}) AS emoji`
  return row!
}

/** The message takes `pts` as a reaction change (reactions_pts = pts: REACTIONS_CHANGED), with the conversation's last_pts. */
const reactionChange = (r: Reaction, pts: number, alongside: Prisma.Sql) => (conn: Conn) =>
  changeWithPts(
    conn,
    r.conversationId,
    pts,
    Prisma.sql`UPDATE messages m SET pts = ${pts}, reactions_pts = ${pts} WHERE ${oneMessage(r)} AND ${notRecalled}`,
    alongside,
  )

/**
 * Adds a reaction the caller found absent (under the conversation lock) and counts it in its
 * emoji's aggregate. Null when the message is recalled (then nothing is written).
 */
export function insertReaction(conn: Conn, r: Reaction, pts: number): Promise<MessageRecord | null> {
  return reactionChange(
    r,
    pts,
    Prisma.sql`,
    added AS (INSERT INTO message_reactions (conversation_id, seq, emoji, user_id, reacted_at)
      SELECT ${r.conversationId}, ${r.seq}, ${r.emoji}, ${r.userId}, clock_timestamp() WHERE EXISTS (SELECT 1 FROM changed)),
    counted AS (INSERT INTO message_reaction_groups AS g (conversation_id, seq, emoji, count, first_reacted_at)
      SELECT ${r.conversationId}, ${r.seq}, ${r.emoji}, 1, clock_timestamp() WHERE EXISTS (SELECT 1 FROM changed)
      ON CONFLICT (conversation_id, seq, emoji) DO UPDATE SET count = g.count + 1)`,
  )(conn)
}

/**
 * Removes a reaction the caller found present. The aggregate loses one (and goes when it was the
 * last); its first reaction becomes the earliest remaining one (an index lookup).
 */
export function deleteReaction(conn: Conn, r: Reaction, pts: number): Promise<MessageRecord | null> {
  return reactionChange(
    r,
    pts,
    Prisma.sql`,
    removed AS (DELETE FROM message_reactions WHERE ${oneReaction(r)} AND user_id = ${r.userId} AND EXISTS (SELECT 1 FROM changed)),
    emptied AS (DELETE FROM message_reaction_groups WHERE ${oneReaction(r)} AND count = 1 AND EXISTS (SELECT 1 FROM changed)),
    counted AS (UPDATE message_reaction_groups g SET count = g.count - 1,
        first_reacted_at = (SELECT min(x.reacted_at) FROM message_reactions x
          WHERE x.conversation_id = g.conversation_id AND x.seq = g.seq AND x.emoji = g.emoji AND x.user_id <> ${r.userId})
      WHERE g.conversation_id = ${r.conversationId} AND g.seq = ${r.seq} AND g.emoji = ${r.emoji} AND g.count > 1 AND EXISTS (SELECT 1 FROM changed))`,
  )(conn)
}

/**
 * The reaction groups of many messages, earliest first reaction first, with whether `viewerId`
 * reacted: one statement for a page of messages, one row per emoji however many reacted.
 */
export async function findReactionGroups(
  conn: Conn,
  viewerId: number,
  keys: readonly MessageKey[],
): Promise<ReactionGroupRecord[]> {
  const rows = await queryPooled<{
    conversationId: number | bigint
    seq: number | bigint
    emoji: string
    count: number
    firstReactedAt: Date
    viewerReacted: boolean
  }>(
    conn,
    Prisma.sql`
    SELECT g.conversation_id AS "conversationId", g.seq, g.emoji, g.count, g.first_reacted_at AS "firstReactedAt",
      EXISTS (SELECT 1 FROM message_reactions r
        WHERE r.conversation_id = g.conversation_id AND r.seq = g.seq AND r.emoji = g.emoji AND r.user_id = ${viewerId}) AS "viewerReacted"
    FROM unnest(${bigintArray(keys.map((k) => k.conversationId))}, ${bigintArray(keys.map((k) => k.seq))}) AS k(conversation_id, seq)
    JOIN message_reaction_groups g ON g.conversation_id = k.conversation_id AND g.seq = k.seq
    ORDER BY g.first_reacted_at, g.emoji`,
  )
  return rows.map((r) => ({ ...r, conversationId: Number(r.conversationId), seq: Number(r.seq) }))
}

export type ReactorRecord = UserRecord & { reactedAt: Date }
/** One page of one group's reactors: after (reactedAt, userId), at most `limit`. */
export type ReactorPage = MessageKey & {
  emoji: string
  after: { reactedAt: Date; userId: number } | null
  limit: number
}

/**
 * Who reacted, earliest first, for many groups at once (one statement for a page of messages): per
 * page a range scan of the group's (…, emoji, reacted_at) index, never the whole group.
 */
export async function listReactors(conn: Conn, pages: readonly ReactorPage[]): Promise<ReactorRecord[][]> {
  const rows = await conn.$queryRaw<
    {
      i: bigint
      id: bigint
      handle: string
      displayName: string
      kind: UserRecord['kind']
      deactivated: boolean
      reactedAt: Date
    }[]
  >`
    SELECT k.i, u.id, u.handle, u.display_name AS "displayName", u.kind, u.deactivated_at IS NOT NULL AS deactivated, r.reacted_at AS "reactedAt"
    FROM unnest(${bigintArray(pages.map((p) => p.conversationId))}, ${bigintArray(pages.map((p) => p.seq))}, ${pages.map((p) => p.emoji)}::text[],
      ${pages.map((p) => p.after?.reactedAt.toISOString() ?? null)}::timestamptz[], ${bigintArray(pages.map((p) => p.after?.userId ?? 0))},
      ${pages.map((p) => p.limit)}::int[]) WITH ORDINALITY AS k(conversation_id, seq, emoji, after_at, after_user, lim, i)
    CROSS JOIN LATERAL (
      SELECT x.user_id, x.reacted_at FROM message_reactions x
      WHERE x.conversation_id = k.conversation_id AND x.seq = k.seq AND x.emoji = k.emoji
        AND (k.after_at IS NULL OR (x.reacted_at, x.user_id) > (k.after_at, k.after_user))
      ORDER BY x.reacted_at, x.user_id LIMIT k.lim) r
    JOIN users u ON u.id = r.user_id
    ORDER BY k.i, r.reacted_at, r.user_id`
  const byPage = pages.map((): ReactorRecord[] => [])
  for (const { i, id, ...user } of rows) byPage[Number(i) - 1]!.push({ ...user, id: Number(id) })
  return byPage
}
