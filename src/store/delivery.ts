import type { Db } from '../db/client.ts'
import type { MessageKey } from '../domain/core/index.ts'
import { MEMBER_COLUMNS, MESSAGE_COLUMNS, visibleToUser } from './fragments.ts'
import {
  toMember,
  toMessage,
  type MemberRecord,
  type MessageRecord,
  type MessageRow,
  type MessageStatus,
} from './records.ts'
import { queryPooled } from './pooled.ts'
import { Prisma, bigintArray, type Conn } from './sql.ts'

/** Reads for live delivery: each runs once per event and process, whatever the number of subscribers. */

type MemberRow = Parameters<typeof toMember>[0]

/** `doNotDisturbUntil`: the member's own setting, which decides MessageEvent.alert. */
export type DeliveryMember = { member: MemberRecord; sees: boolean; doNotDisturbUntil: Date | null }

/**
 * Which of `userIds` are current members of the conversation, with their membership rows, and for
 * a message event whether each may see message `seq` (membership window, directed, deleted-for-me).
 */
export async function findDeliveryMembers(
  conn: Conn,
  conversationId: number,
  userIds: readonly number[],
  seq: number | null,
): Promise<DeliveryMember[]> {
  // The shared visibility rule, evaluated for each member row as its own reader.
  const sees =
    seq === null
      ? Prisma.sql`true`
      : Prisma.sql`EXISTS (SELECT 1 FROM messages m WHERE m.conversation_id = cm.conversation_id AND m.seq = ${seq} AND ${visibleToUser(Prisma.sql`cm.user_id`)})`
  const rows = await queryPooled<MemberRow & { sees: boolean; doNotDisturbUntil: Date | null }>(
    conn,
    Prisma.sql`
    SELECT ${MEMBER_COLUMNS}, ${sees} AS sees, cs.do_not_disturb_until AS "doNotDisturbUntil"
    FROM conversation_members cm
    LEFT JOIN conversation_settings cs ON cs.conversation_id = cm.conversation_id AND cs.user_id = cm.user_id
    WHERE cm.conversation_id = ${conversationId} AND cm.user_id = ANY(${bigintArray(userIds)}) AND cm.left_at IS NULL`,
  )
  return rows.map(({ sees, doNotDisturbUntil, ...member }) => ({ member: toMember(member), sees, doNotDisturbUntil }))
}

/** One message as stored, whoever reads it (delivery applies visibility per subscriber). */
export async function findMessage(conn: Conn, key: MessageKey): Promise<MessageRecord | null> {
  const rows = await queryPooled<MessageRow>(
    conn,
    Prisma.sql`
    SELECT ${MESSAGE_COLUMNS} FROM messages m WHERE m.conversation_id = ${key.conversationId} AND m.seq = ${key.seq}`,
  )
  return rows[0] ? toMessage(rows[0]) : null
}

export type ChangeKey = { seq: number; pts: number; status: MessageStatus; edited: boolean; reacted: boolean }

/**
 * The changes with pts in (afterPts, untilPts], as keys: a live stream fills a gap with them. A pts
 * absent from the answer belongs to a message changed again later (its row carries the newer pts).
 */
export async function findChangeKeys(
  conn: Conn,
  conversationId: number,
  afterPts: number,
  untilPts: number,
): Promise<ChangeKey[]> {
  const rows = await queryPooled<{
    seq: number | bigint
    pts: number | bigint
    status: MessageStatus
    edited: boolean
    reacted: boolean
  }>(
    conn,
    Prisma.sql`
    SELECT m.seq, m.pts, m.status, m.edited_at IS NOT NULL AS edited, m.reactions_pts IS NOT DISTINCT FROM m.pts AS reacted FROM messages m
    WHERE m.conversation_id = ${conversationId} AND m.pts > ${afterPts} AND m.pts <= ${untilPts}
    ORDER BY m.pts`,
  )
  return rows.map((r) => ({
    seq: Number(r.seq),
    pts: Number(r.pts),
    status: r.status,
    edited: r.edited,
    reacted: r.reacted,
  }))
}

/** The newest pts of each conversation: where a live stream starts (a stream of a whole account starts thousands: through the pool). */
export async function findLastPts(db: Db, conversationIds: readonly number[]): Promise<Map<number, number>> {
  const rows = await queryPooled<{ id: number | bigint; lastPts: number | bigint }>(
    db,
    Prisma.sql`
    SELECT id, last_pts AS "lastPts" FROM conversations WHERE id = ANY(${bigintArray(conversationIds)})`,
  )
  return new Map(rows.map((r) => [Number(r.id), Number(r.lastPts)]))
}

/** Every conversation the user is a current member of (the inbox and account streams listen to all of them). */
export async function listMemberConversationIds(db: Db, userId: number): Promise<number[]> {
  const rows = await queryPooled<{ id: number | bigint }>(
    db,
    Prisma.sql`
    SELECT conversation_id AS id FROM conversation_members WHERE user_id = ${userId} AND left_at IS NULL`,
  )
  return rows.map((r) => Number(r.id))
}
