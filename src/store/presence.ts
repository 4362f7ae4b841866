import { bigintArray, type Conn } from './sql.ts'

/** What User.presence needs of a user besides whether they are online, as `viewerId` may ask. */
export type PresenceFacts = { userId: number; visible: boolean; sharesConversation: boolean; lastSeenAt: Date | null }

/** For each of `userIds`: their presence setting, last seen, and whether they share a conversation with the viewer. */
export async function findPresenceFacts(
  conn: Conn,
  viewerId: number,
  userIds: readonly number[],
): Promise<PresenceFacts[]> {
  const rows = await conn.$queryRaw<
    { userId: bigint; visible: boolean; sharesConversation: boolean; lastSeenAt: Date | null }[]
  >`
    SELECT u.id AS "userId", u.presence_visible AS visible, u.last_seen_at AS "lastSeenAt",
      (u.id = ${viewerId} OR EXISTS (
        SELECT 1 FROM conversation_members mine
        JOIN conversation_members theirs ON theirs.conversation_id = mine.conversation_id AND theirs.user_id = u.id
          AND theirs.left_at IS NULL
        WHERE mine.user_id = ${viewerId} AND mine.left_at IS NULL)) AS "sharesConversation"
    FROM users u WHERE u.id = ANY(${bigintArray(userIds)})`
  return rows.map((r) => ({ ...r, userId: Number(r.userId) }))
}

/** The user's presence setting and the peers of their PRIVATE conversations (who hear PresenceEvents). */
export async function findPresenceAudience(
  conn: Conn,
  userId: number,
): Promise<{ visible: boolean; lastSeenAt: Date | null; peerIds: number[] }> {
  const [row] = await conn.$queryRaw<{ visible: boolean; lastSeenAt: Date | null; peerIds: bigint[] }[]>`
    SELECT u.presence_visible AS visible, u.last_seen_at AS "lastSeenAt", ARRAY(
      SELECT peer.user_id FROM conversation_members mine
      JOIN conversations c ON c.id = mine.conversation_id AND c.type = 'PRIVATE'
      JOIN conversation_members peer ON peer.conversation_id = mine.conversation_id AND peer.user_id <> mine.user_id
        AND peer.left_at IS NULL
      WHERE mine.user_id = u.id AND mine.left_at IS NULL) AS "peerIds"
    FROM users u WHERE u.id = ${userId}`
  return row ? { ...row, peerIds: row.peerIds.map(Number) } : { visible: false, lastSeenAt: null, peerIds: [] }
}

export async function touchLastSeen(conn: Conn, userIds: readonly number[], at: Date): Promise<void> {
  if (userIds.length)
    await conn.$executeRaw`UPDATE users SET last_seen_at = ${at} WHERE id = ANY(${bigintArray(userIds)})`
}

export async function setPresenceVisible(conn: Conn, userId: number, visible: boolean): Promise<void> {
  await conn.$executeRaw`UPDATE users SET presence_visible = ${visible} WHERE id = ${userId}`
}

export async function isPresenceVisible(conn: Conn, userId: number): Promise<boolean> {
  const [row] = await conn.$queryRaw<
    { visible: boolean }[]
  >`SELECT presence_visible AS visible FROM users WHERE id = ${userId}`
  return row?.visible ?? true
}
