import { Prisma, bigintArray, type Conn } from './sql.ts'

/** Records that `blockerId` blocks `blockedId` (idempotent). False when the blocked user does not exist. */
export async function insertBlock(conn: Conn, blockerId: number, blockedId: number): Promise<boolean> {
  const rows = await conn.$queryRaw<{ found: boolean }[]>`
    WITH target AS (SELECT id FROM users WHERE id = ${blockedId}),
    inserted AS (
      INSERT INTO user_blocks (blocker_id, blocked_id) SELECT ${blockerId}, id FROM target
      ON CONFLICT DO NOTHING)
    SELECT EXISTS (SELECT 1 FROM target) AS found`
  return rows[0]!.found
}

export async function deleteBlock(conn: Conn, blockerId: number, blockedId: number): Promise<void> {
  await conn.$executeRaw`DELETE FROM user_blocks WHERE blocker_id = ${blockerId} AND blocked_id = ${blockedId}`
}

/**
 * Those of `userIds` (ids, or a bigint[] expression) whom another member of the conversation blocks
 * (the rule for private conversations).
 */
export const blockedByOtherMember = (
  conversationId: number | Prisma.Sql,
  userIds: readonly number[] | Prisma.Sql,
) => Prisma.sql`
  SELECT b.blocked_id FROM conversation_members peer
  JOIN user_blocks b ON b.blocker_id = peer.user_id AND b.blocked_id <> peer.user_id
  WHERE peer.conversation_id = ${conversationId} AND b.blocked_id = ANY(${userIds instanceof Prisma.Sql ? userIds : bigintArray(userIds)})`

/** Whether the other participant of a private conversation blocks `senderId`. */
export async function isBlockedByPeer(conn: Conn, conversationId: number, senderId: number): Promise<boolean> {
  const rows = await conn.$queryRaw<
    { blocked: boolean }[]
  >`SELECT EXISTS (${blockedByOtherMember(conversationId, [senderId])}) AS blocked`
  return rows[0]!.blocked
}
