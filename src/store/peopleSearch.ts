import { toMember, toUser, type MemberRecord, type UserRecord } from './records.ts'
import { queryPooled } from './pooled.ts'
import { Prisma, type Conn } from './sql.ts'
import { USER_COLUMNS, MEMBER_COLUMNS } from './fragments.ts'

/** Searching people: every user by name, or a conversation's members. */

/** Where a page of people starts: the last one of the previous page. */
export type UserCursor = { displayName: string; handle: string }

/** Users whose handle or display name matches, by display name then handle. */
export async function searchUsers(
  conn: Conn,
  tsquery: string,
  after: UserCursor | null,
  limit: number,
): Promise<UserRecord[]> {
  const rows = await queryPooled<Parameters<typeof toUser>[0]>(
    conn,
    Prisma.sql`
    SELECT ${USER_COLUMNS} FROM users u
    WHERE u.search_document @@ ${tsquery}::tsquery
      ${after ? Prisma.sql`AND (u.display_name, u.handle) > (${after.displayName}, ${after.handle})` : Prisma.empty}
    ORDER BY u.display_name, u.handle
    LIMIT ${limit}`,
  )
  return rows.map(toUser)
}

/** Current members of a conversation whose handle or display name matches, by display name then handle. */
export async function searchMembers(
  conn: Conn,
  conversationId: number,
  tsquery: string,
  limit: number,
): Promise<MemberRecord[]> {
  const rows = await queryPooled<Parameters<typeof toMember>[0]>(
    conn,
    Prisma.sql`
    SELECT ${MEMBER_COLUMNS} FROM conversation_members cm JOIN users u ON u.id = cm.user_id
    WHERE cm.conversation_id = ${conversationId} AND cm.left_at IS NULL AND u.search_document @@ ${tsquery}::tsquery
    ORDER BY u.display_name, u.handle
    LIMIT ${limit}`,
  )
  return rows.map(toMember)
}
