import type { MemberRole } from '../generated/prisma/enums.ts'
import { toMember, toUser, type MemberRecord, type UserRecord } from './records.ts'
import { queryPooled } from './pooled.ts'
import { Prisma, bigintArray, type Conn } from './sql.ts'
import { USER_COLUMNS, MEMBER_COLUMNS } from './fragments.ts'
import type { MemberRow } from './conversations.ts'

/** Membership rows: joining, leaving, roles, mutes, and the member lists and counts. */

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
