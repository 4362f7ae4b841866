import type { ConversationType, HistoryVisibility, MemberRole } from '../generated/prisma/enums.ts'
import {
  dateFromMs,
  toConversation,
  toMember,
  toUser,
  type ConversationRecord,
  type MemberRecord,
  type UserRecord,
} from './records.ts'
import { queryPooled } from './pooled.ts'
import { Prisma, bigintArray, epochMs, planIndependentIds, type Conn } from './sql.ts'
import {
  USER_COLUMNS,
  CONVERSATION_COLUMNS,
  MEMBER_COLUMNS,
  MEMBER_JSON,
  currentMembership,
  membershipOfId,
} from './fragments.ts'

export type ConversationRow = Parameters<typeof toConversation>[0]
export type MemberRow = Parameters<typeof toMember>[0]
type AccessRow = ConversationRow & { member: MemberRow | null }

export type ConversationAccess = { conversation: ConversationRecord; member: MemberRecord | null }

// Member rows read as JSON carry their timestamps as strings.
export const toMemberFromJson = (m: MemberRow) =>
  toMember({ ...m, lastReadAt: date(m.lastReadAt), mutedUntil: date(m.mutedUntil), joinedAt: date(m.joinedAt)! })
const toAccess = (r: AccessRow): ConversationAccess => ({
  conversation: toConversation(r),
  member: r.member ? toMemberFromJson(r.member) : null,
})
const date = (v: Date | string | null) => (v === null ? null : new Date(v))

/** Conversations among distinct `ids` with the viewer's current membership (null when not a member), for batched access checks. */
export async function findConversationsForUser(
  conn: Conn,
  ids: readonly number[],
  userId: number,
): Promise<ConversationAccess[]> {
  const rows = await queryPooled<AccessRow>(
    conn,
    Prisma.sql`
    SELECT ${CONVERSATION_COLUMNS}, ${MEMBER_JSON}
    FROM unnest(${planIndependentIds(ids)}) AS wanted(id)
    CROSS JOIN LATERAL (SELECT * FROM conversations c WHERE c.id = wanted.id OFFSET 0) c
    LEFT JOIN LATERAL ${membershipOfId(userId, Prisma.sql`c.id`)} ON true`,
  )
  return rows.map(toAccess)
}

/**
 * A conversation `c` with the user's membership `cm` (currentMembership: null columns when none) as a
 * JSON array in AccessTuple's order, for statements that return it inside a JSON value (a history
 * page, a sync difference): no keys to write and read, timestamps as epoch milliseconds.
 */
export const ACCESS_TUPLE = Prisma.sql`json_build_array(c.id, c.type, c.title, c.history_visibility, c.last_seq, c.last_pts,
  ${epochMs('c.last_activity_at')}, ${epochMs('c.created_at')}, cm.user_id, cm.role, cm.visible_from_seq, cm.last_read_seq,
  ${epochMs('cm.last_read_at')}, ${epochMs('cm.muted_until')}, ${epochMs('cm.joined_at')})`
export type AccessTuple = [
  id: number,
  type: ConversationType,
  title: string | null,
  historyVisibility: HistoryVisibility,
  lastSeq: number,
  lastPts: number,
  lastActivityAt: number,
  createdAt: number,
  userId: number | null,
  role: MemberRole,
  visibleFromSeq: number,
  lastReadSeq: number,
  lastReadAt: number | null,
  mutedUntil: number | null,
  joinedAt: number,
]
/** One conversation's findConversationsForUser row as an ACCESS_TUPLE inside a larger statement (null when none). */
export const accessTupleOf = (conversationId: number, userId: number) =>
  Prisma.sql`(SELECT ${ACCESS_TUPLE} FROM conversations c ${currentMembership(userId)} WHERE c.id = ${conversationId})`
export const accessFromTuple = (t: AccessTuple): ConversationAccess => ({
  conversation: {
    id: t[0],
    type: t[1],
    title: t[2],
    historyVisibility: t[3],
    lastSeq: t[4],
    lastPts: t[5],
    lastActivityAt: new Date(t[6]),
    createdAt: new Date(t[7]),
  },
  member:
    t[8] === null
      ? null
      : {
          conversationId: t[0],
          userId: t[8],
          role: t[9],
          visibleFromSeq: t[10],
          lastReadSeq: t[11],
          lastReadAt: dateFromMs(t[12]),
          mutedUntil: dateFromMs(t[13]),
          joinedAt: new Date(t[14]),
        },
})

export async function insertConversation(
  conn: Conn,
  c: {
    type: ConversationType
    title: string | null
    historyVisibility: HistoryVisibility
    privateKey?: string
    createdById: number
  },
): Promise<ConversationRecord | null> {
  const rows = await conn.$queryRaw<ConversationRow[]>`
    INSERT INTO conversations AS c (type, title, history_visibility, private_key, created_by_id)
    VALUES (${c.type}::"ConversationType", ${c.title}, ${c.historyVisibility}::"HistoryVisibility", ${c.privateKey ?? null}, ${c.createdById})
    ON CONFLICT (private_key) DO NOTHING
    RETURNING ${CONVERSATION_COLUMNS}`
  return rows[0] ? toConversation(rows[0]) : null
}

export async function findConversationIdByPrivateKey(conn: Conn, privateKey: string): Promise<number | null> {
  const rows = await conn.$queryRaw<{ id: bigint }[]>`SELECT id FROM conversations WHERE private_key = ${privateKey}`
  return rows[0] ? Number(rows[0].id) : null
}

/**
 * Adds members, or brings back ones who left; current members are left untouched.
 * Returns the ids that actually (re)joined.
 */
export async function addMembers(
  conn: Conn,
  conversationId: number,
  members: { userId: number; role: MemberRole }[],
  visibleFromSeq: number,
): Promise<number[]> {
  if (!members.length) return []
  const rows = await conn.$queryRaw<{ userId: bigint }[]>`
    INSERT INTO conversation_members AS cm (conversation_id, user_id, role, visible_from_seq)
    SELECT ${conversationId}, u.user_id, u.role, ${visibleFromSeq}
    FROM unnest(${bigintArray(members.map((m) => m.userId))}, ${members.map((m) => m.role)}::"MemberRole"[]) AS u(user_id, role)
    ON CONFLICT (conversation_id, user_id) DO UPDATE
      SET left_at = NULL, role = EXCLUDED.role, visible_from_seq = EXCLUDED.visible_from_seq, joined_at = now(), muted_until = NULL
      WHERE cm.left_at IS NOT NULL
    RETURNING user_id AS "userId"`
  return rows.map((r) => Number(r.userId))
}

/** A member who leaves loses their pin there, so coming back cannot take them past the pin limit. */
export async function markMemberLeft(conn: Conn, conversationId: number, userId: number): Promise<void> {
  await conn.$executeRaw`
    WITH gone AS (UPDATE conversation_members SET left_at = now() WHERE conversation_id = ${conversationId} AND user_id = ${userId} AND left_at IS NULL RETURNING user_id)
    UPDATE conversation_settings SET pinned_at = NULL WHERE conversation_id = ${conversationId} AND user_id IN (SELECT user_id FROM gone) AND pinned_at IS NOT NULL`
}

export async function setMemberRole(
  conn: Conn,
  conversationId: number,
  userId: number,
  role: MemberRole,
): Promise<MemberRecord | null> {
  const rows = await conn.$queryRaw<MemberRow[]>`
    UPDATE conversation_members cm SET role = ${role}::"MemberRole"
    WHERE conversation_id = ${conversationId} AND user_id = ${userId} AND left_at IS NULL
    RETURNING ${MEMBER_COLUMNS}`
  return rows[0] ? toMember(rows[0]) : null
}

export async function findMember(conn: Conn, conversationId: number, userId: number): Promise<MemberRecord | null> {
  const rows = await queryPooled<MemberRow>(
    conn,
    Prisma.sql`
    SELECT ${MEMBER_COLUMNS} FROM conversation_members cm
    WHERE conversation_id = ${conversationId} AND user_id = ${userId} AND left_at IS NULL`,
  )
  return rows[0] ? toMember(rows[0]) : null
}

/** The longest-standing remaining member, preferring admins: the next owner when the owner leaves. */
export async function findSuccessor(conn: Conn, conversationId: number, excludeUserId: number): Promise<number | null> {
  const rows = await conn.$queryRaw<{ userId: bigint }[]>`
    SELECT user_id AS "userId" FROM conversation_members
    WHERE conversation_id = ${conversationId} AND left_at IS NULL AND user_id <> ${excludeUserId}
    ORDER BY (role = 'ADMIN') DESC, joined_at, user_id LIMIT 1`
  return rows[0] ? Number(rows[0].userId) : null
}

/** Current members of one conversation, by user id; keyset-paged. */
export async function listMembers(
  conn: Conn,
  conversationId: number,
  opts: { afterUserId: number; limit: number },
): Promise<MemberRecord[]> {
  const rows = await queryPooled<MemberRow>(
    conn,
    Prisma.sql`
    SELECT ${MEMBER_COLUMNS} FROM conversation_members cm
    WHERE cm.conversation_id = ${conversationId} AND cm.left_at IS NULL AND cm.user_id > ${opts.afterUserId}
    ORDER BY cm.user_id LIMIT ${opts.limit}`,
  )
  return rows.map(toMember)
}

/** For each conversation, one member other than the viewer (the PRIVATE peer), with their user row. */
export async function findPeers(
  conn: Conn,
  conversationIds: readonly number[],
  viewerId: number,
): Promise<{ conversationId: number; user: UserRecord }[]> {
  const rows = await queryPooled<Parameters<typeof toUser>[0] & { conversationId: number | bigint }>(
    conn,
    Prisma.sql`
    SELECT DISTINCT ON (cm.conversation_id) cm.conversation_id AS "conversationId", ${USER_COLUMNS}
    FROM conversation_members cm JOIN users u ON u.id = cm.user_id
    WHERE cm.conversation_id = ANY(${bigintArray(conversationIds)}) AND cm.user_id <> ${viewerId}
    ORDER BY cm.conversation_id, cm.user_id`,
  )
  return rows.map((r) => ({ conversationId: Number(r.conversationId), user: toUser(r) }))
}

/** How many current members the conversation has. */
export async function countMembers(conn: Conn, conversationId: number): Promise<number> {
  const rows = await conn.$queryRaw<{ n: number }[]>`
    SELECT count(*)::int AS n FROM conversation_members WHERE conversation_id = ${conversationId} AND left_at IS NULL`
  return rows[0]!.n
}

/** How many of `userIds` are current members. */
export async function countCurrentMembers(
  conn: Conn,
  conversationId: number,
  userIds: readonly number[],
): Promise<number> {
  const rows = await conn.$queryRaw<{ n: number }[]>`
    SELECT count(*)::int AS n FROM conversation_members
    WHERE conversation_id = ${conversationId} AND user_id = ANY(${bigintArray(userIds)}) AND left_at IS NULL`
  return rows[0]!.n
}

export async function findConversationType(conn: Conn, id: number): Promise<ConversationType | null> {
  const rows = await conn.$queryRaw<{ type: ConversationType }[]>`SELECT type FROM conversations WHERE id = ${id}`
  return rows[0]?.type ?? null
}

export async function updateConversationTitle(conn: Conn, id: number, title: string): Promise<void> {
  await conn.$executeRaw`UPDATE conversations SET title = ${title} WHERE id = ${id}`
}

/** Sets or clears (null) a current member's mute end time. */
export async function setMemberMutedUntil(
  conn: Conn,
  conversationId: number,
  userId: number,
  until: Date | null,
): Promise<MemberRecord | null> {
  const rows = await conn.$queryRaw<MemberRow[]>`
    UPDATE conversation_members cm SET muted_until = ${until}
    WHERE conversation_id = ${conversationId} AND user_id = ${userId} AND left_at IS NULL
    RETURNING ${MEMBER_COLUMNS}`
  return rows[0] ? toMember(rows[0]) : null
}
