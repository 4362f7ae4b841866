import type { Db } from '../db/client.ts'
import type { MessageKey } from '../domain/core/index.ts'
import { CONVERSATION_COLUMNS, MEMBER_COLUMNS, MESSAGE_COLUMNS } from './fragments.ts'
import type { ReactionGroupRecord } from './reactions.ts'
import {
  dateFromMs,
  toConversation,
  toMember,
  toMessage,
  toUser,
  type ConversationRecord,
  type MemberRecord,
  type MessageRecord,
  type MessageRow,
  type MessageStatus,
  type UserRecord,
} from './records.ts'
import { queryPooled } from './pooled.ts'
import { Prisma, bigintArray, epochMs, type Conn } from './sql.ts'
import { VIEWER_STATE_COLUMNS, type ViewerState } from './userActions.ts'

/** Reads for live delivery: each runs once per event and process, whatever the number of subscribers. */

type MemberRow = Parameters<typeof toMember>[0]
type ConversationRow = Parameters<typeof toConversation>[0]

/**
 * A local subscriber's current membership, and (`sees`) whether it may see the event's message:
 * decided in memory per event (domain/live/rules.ts#seesMessage), not read per member.
 * `doNotDisturbUntil`: the member's own setting, which decides MessageEvent.alert.
 */
export type DeliveryMember = { member: MemberRecord; sees: boolean; doNotDisturbUntil: Date | null }

/**
 * Which of `userIds` are current members of the conversation, with their membership rows and
 * do-not-disturb, each with the conversation row (what a message event's payload pairs with its
 * member): one row per subscriber that is a member, nothing else per subscriber.
 */
export async function findDeliveryMembers(
  conn: Conn,
  conversationId: number,
  userIds: readonly number[],
): Promise<(Omit<DeliveryMember, 'sees'> & { conversation: ConversationRecord })[]> {
  const rows = await queryPooled<MemberRow & ConversationRow & { doNotDisturbUntil: Date | null }>(
    conn,
    Prisma.sql`
    SELECT ${MEMBER_COLUMNS}, ${CONVERSATION_COLUMNS}, cs.do_not_disturb_until AS "doNotDisturbUntil"
    FROM conversation_members cm
    JOIN conversations c ON c.id = cm.conversation_id
    LEFT JOIN conversation_settings cs ON cs.conversation_id = cm.conversation_id AND cs.user_id = cm.user_id
    WHERE cm.conversation_id = ${conversationId} AND cm.user_id = ANY(${bigintArray(userIds)}) AND cm.left_at IS NULL`,
  )
  return rows.map((row) => ({
    member: toMember(row),
    conversation: toConversation(row),
    doNotDisturbUntil: row.doNotDisturbUntil,
  }))
}

const keysTable = (keys: readonly MessageKey[]) =>
  Prisma.sql`unnest(${bigintArray(keys.map((k) => k.conversationId))}, ${bigintArray(keys.map((k) => k.seq))}) AS k(conversation_id, seq)`

export type AudienceState = MessageKey & ViewerState & { userId: number }

type SenderTuple = [id: number, handle: string, displayName: string, kind: UserRecord['kind'], deactivated: boolean]

/** One user's ACTIVE actions on message `m`, as [userId, favorite, deletedForMe, remindAt in epoch ms]. */
type StateTuple = [userId: number, favorite: boolean, deletedForMe: boolean, remindAt: number | null]

/**
 * The ACTIVE actions (favourite, reminder, delete-for-me) of any of `userIds` on the messages of
 * `keys`: one per user and message that has any, so a fresh message costs no row at all. With
 * `withMessages`, each message as stored too (an event's own message comes with them), and its
 * sender's user row, which nearly every payload shows.
 */
export async function findAudienceStates(
  conn: Conn,
  keys: readonly MessageKey[],
  userIds: readonly number[],
  withMessages = false,
): Promise<{ messages: MessageRecord[]; states: AudienceState[]; senders: UserRecord[] }> {
  const rows = await queryPooled<MessageRow & { states: StateTuple[]; sender: SenderTuple | null }>(
    conn,
    Prisma.sql`
    SELECT ${
      withMessages
        ? Prisma.sql`m.*, (SELECT json_build_array(u.id, u.handle, u.display_name, u.kind, u.deactivated_at IS NOT NULL) FROM users u WHERE u.id = m."senderId") AS sender`
        : Prisma.sql`m."conversationId", m.seq`
    }, (
      SELECT coalesce(json_agg(json_build_array(s.user_id, s.favorite, s."deletedForMe", ${epochMs('s."remindAt"')})), '[]')
      FROM (SELECT ua.user_id, ${VIEWER_STATE_COLUMNS} FROM message_user_actions ua
        WHERE ua.conversation_id = m."conversationId" AND ua.seq = m.seq AND ua.user_id = ANY(${bigintArray(userIds)})
          AND ua.status = 'ACTIVE'
        GROUP BY ua.user_id) s) AS states
    FROM ${keysTable(keys)} CROSS JOIN LATERAL (
      SELECT ${MESSAGE_COLUMNS} FROM messages m WHERE m.conversation_id = k.conversation_id AND m.seq = k.seq OFFSET 0) m`,
  )
  return {
    messages: withMessages ? rows.map(toMessage) : [],
    senders: rows.flatMap(({ sender }) =>
      sender
        ? [
            toUser({
              id: sender[0],
              handle: sender[1],
              displayName: sender[2],
              kind: sender[3],
              deactivated: sender[4],
            }),
          ]
        : [],
    ),
    states: rows.flatMap((r) =>
      r.states.map(([userId, favorite, deletedForMe, remindAt]) => ({
        conversationId: Number(r.conversationId),
        seq: Number(r.seq),
        userId: Number(userId),
        favorite,
        deletedForMe,
        remindAt: dateFromMs(remindAt),
      })),
    ),
  }
}

/** A message's reaction group without a viewer's mark, and which of the asked users reacted with its emoji. */
export type AudienceReactionGroup = Omit<ReactionGroupRecord, 'viewerReacted'> & { reactors: number[] }

/** The reaction groups of `keys` (one lookup per key, as findStoredMessages), each with the ones among `userIds` who reacted with it. */
export async function findAudienceReactions(
  conn: Conn,
  keys: readonly MessageKey[],
  userIds: readonly number[],
): Promise<AudienceReactionGroup[]> {
  const rows = await queryPooled<{
    conversationId: bigint
    seq: bigint
    emoji: string
    count: number
    firstReactedAt: Date
    reactors: bigint[]
  }>(
    conn,
    Prisma.sql`
    SELECT g.conversation_id AS "conversationId", g.seq, g.emoji, g.count, g.first_reacted_at AS "firstReactedAt",
      ARRAY(SELECT r.user_id FROM message_reactions r
        WHERE r.conversation_id = g.conversation_id AND r.seq = g.seq AND r.emoji = g.emoji AND r.user_id = ANY(${bigintArray(userIds)})) AS reactors
    FROM ${keysTable(keys)} CROSS JOIN LATERAL (
      SELECT * FROM message_reaction_groups g WHERE g.conversation_id = k.conversation_id AND g.seq = k.seq OFFSET 0) g
    ORDER BY g.first_reacted_at, g.emoji`,
  )
  return rows.map((r) => ({
    ...r,
    conversationId: Number(r.conversationId),
    seq: Number(r.seq),
    reactors: r.reactors.map(Number),
  }))
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
