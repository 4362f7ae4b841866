import { blockedByOtherMember } from './blocks.ts'
import { privatePeersSql, type PrivatePeerTuple } from './friendships.ts'
import { sendSettingsFromJson, settingsTouchedBySend, type SendSettings } from './conversationSettings.ts'
import { toMemberFromJson, type ConversationAccess, type ConversationRow, type MemberRow } from './conversations.ts'
import { CONVERSATION_COLUMNS, memberJson, MESSAGE_COLUMNS } from './fragments.ts'
import { messageFromJson, type IdempotencyKey } from './messages.ts'
import {
  toConversation,
  type ConversationRecord,
  type MemberRecord,
  type MessageRecord,
  type MessageRow,
  type UserKind,
} from './records.ts'
import { Prisma, arrayLiteral, bigintArray, plannedPerCall, type Conn } from './sql.ts'

/** The conversation row lock: the seq/pts allocator every write that takes a seq or pts goes through. */

export type LockedConversation = {
  conversation: ConversationRecord
  members: Map<number, MemberRecord>
  stored: MessageRecord[]
  /** In a PRIVATE conversation, which of the users the other participant blocks. */
  blockedByPeer: Set<number>
  /** For a send: the settings rows it may change (settingsTouchedBySend); else empty. */
  sendSettings: SendSettings[]
  /** With `privatePeers`, in a PRIVATE conversation: each user's peer, its kind and whether they are friends. */
  privatePeers: Map<number, { kind: UserKind; friends: boolean }>
}

/** What to read with one conversation's lock: the current memberships of `userIds`, the messages stored under `keys`. */
export type LockRequest = { conversationId: number; userIds: readonly number[]; keys: readonly IdempotencyKey[] }

/**
 * Locks conversation rows (the seq/pts allocators) in id order, so transactions that lock several
 * never deadlock on them, and reads, in the same statement, for each one: the current memberships
 * of its `userIds`, the messages already stored under its idempotency `keys`, (private
 * conversations) whether the peer blocks any of its `userIds` and (`privatePeers`, for
 * PRIVATE_CHAT_POLICY) the peer's kind and friendship, and for a send (`forSend`) the settings
 * rows the send may change. Every write that takes a seq or pts goes through here, so
 * writes to one conversation serialize (and a send sees every send committed before it) while
 * writes to different conversations never wait for each other. With `skipLocked`, rows another
 * transaction holds are left out instead of waited for (as are missing ones).
 */
export async function lockConversations(
  conn: Conn,
  requests: readonly LockRequest[],
  opts: { forSend?: boolean; skipLocked?: boolean; privatePeers?: boolean } = {},
): Promise<Map<number, LockedConversation>> {
  const wanted = requests.flatMap((r) => r.userIds.map((userId) => [r.conversationId, userId] as const))
  const keys = requests.flatMap((r) => r.keys.map((k) => ({ ...k, conversationId: r.conversationId })))
  // The request's users of the conversation at hand (`c`).
  const usersOfC = Prisma.sql`ARRAY(SELECT w.user_id FROM wanted w WHERE w.conversation_id = c.id)`
  const sendSettings = opts.forSend ? settingsTouchedBySend(Prisma.sql`c.id`, usersOfC) : Prisma.sql`'[]'::json`
  const privatePeers = opts.privatePeers
    ? Prisma.sql`CASE WHEN c.type = 'PRIVATE' THEN ${privatePeersSql(Prisma.sql`c.id`, usersOfC)} ELSE '[]'::json END`
    : Prisma.sql`'[]'::json`
  const rows = await conn.$queryRaw<
    (ConversationRow & {
      members: MemberRow[]
      stored: MessageRow[]
      blockedByPeer: number[]
      sendSettings: Parameters<typeof sendSettingsFromJson>[0][]
      privatePeers: PrivatePeerTuple[]
    })[]
  >`${plannedPerCall}
    WITH wanted AS (
      SELECT * FROM unnest(${bigintArray(wanted.map((w) => w[0]))}, ${bigintArray(wanted.map((w) => w[1]))}) AS w(conversation_id, user_id)),
    keys AS (
      SELECT * FROM unnest(${bigintArray(keys.map((k) => k.conversationId))}, ${arrayLiteral(keys.map((k) => k.senderType))}::"SenderType"[],
        ${bigintArray(keys.map((k) => k.senderId))}, ${arrayLiteral(keys.map((k) => k.clientMessageId))}::varchar[])
        AS k(conversation_id, sender_type, sender_id, client_message_id))
    SELECT ${CONVERSATION_COLUMNS}, (
      SELECT coalesce(json_agg(${memberJson}), '[]') FROM conversation_members cm
      WHERE cm.conversation_id = c.id AND cm.user_id = ANY(${usersOfC}) AND cm.left_at IS NULL) AS members, (
      SELECT coalesce(json_agg(s), '[]') FROM (
        SELECT ${MESSAGE_COLUMNS} FROM keys k
        JOIN messages m ON m.conversation_id = k.conversation_id AND m.sender_type = k.sender_type
          AND m.sender_id = k.sender_id AND m.client_message_id = k.client_message_id
        WHERE k.conversation_id = c.id) s) AS stored, (
      SELECT coalesce(json_agg(DISTINCT blocked.blocked_id), '[]') FROM (${blockedByOtherMember(Prisma.sql`c.id`, usersOfC)}) blocked
      WHERE c.type = 'PRIVATE') AS "blockedByPeer", ${sendSettings} AS "sendSettings", ${privatePeers} AS "privatePeers",
      -- The rest of this write's transaction is planned per call too, foreign-key checks included (store/sql.ts plannedPerCall).
      set_config('plan_cache_mode', 'force_custom_plan', true) AS "planCacheMode"
    FROM conversations c
    WHERE c.id = ANY(${bigintArray(requests.map((r) => r.conversationId))})
    ORDER BY c.id
    FOR UPDATE OF c ${opts.skipLocked ? Prisma.sql`SKIP LOCKED` : Prisma.empty}`
  return new Map(
    rows.map((row) => {
      const members = row.members.map(toMemberFromJson)
      const locked: LockedConversation = {
        conversation: toConversation(row),
        members: new Map(members.map((m) => [m.userId, m])),
        stored: row.stored.map(messageFromJson),
        blockedByPeer: new Set(row.blockedByPeer.map(Number)),
        sendSettings: row.sendSettings.map(sendSettingsFromJson),
        privatePeers: new Map(row.privatePeers.map(([id, kind, friends]) => [Number(id), { kind, friends }])),
      }
      return [locked.conversation.id, locked]
    }),
  )
}

/** lockConversations for one conversation: null when it does not exist. */
export async function lockConversationFor(
  conn: Conn,
  conversationId: number,
  userIds: readonly number[],
  keys: readonly IdempotencyKey[] = [],
): Promise<LockedConversation | null> {
  return (await lockConversations(conn, [{ conversationId, userIds, keys }])).get(conversationId) ?? null
}

/** Locks the conversation row and reads one user's current membership with it (see lockConversationFor). */
export async function lockConversation(
  conn: Conn,
  conversationId: number,
  userId: number,
): Promise<ConversationAccess | null> {
  const locked = await lockConversationFor(conn, conversationId, [userId])
  return locked && { conversation: locked.conversation, member: locked.members.get(userId) ?? null }
}
