import type { FriendshipState, UserKind } from '../generated/prisma/enums.ts'
import { USER_COLUMNS } from './fragments.ts'
import { queryPooled } from './pooled.ts'
import { toUser, type UserRecord } from './records.ts'
import { Prisma, bigintArray, type Conn } from './sql.ts'

export type { FriendshipState }

/**
 * Friendship (issue 46): a row per user and peer holding the pair's state as that user sees it, both
 * rows written together (the migration 20261211300000_friendships says why).
 */

/** The state as the other side sees it. */
const MIRROR: Record<FriendshipState, FriendshipState> = {
  NONE: 'NONE',
  FRIENDS: 'FRIENDS',
  REQUESTED_BY_VIEWER: 'REQUESTED_BY_THEM',
  REQUESTED_BY_THEM: 'REQUESTED_BY_VIEWER',
}

/**
 * Locks both users' rows, in id order (so two pairs sharing a user never deadlock), until the
 * transaction ends: every change of one pair serializes, and so do one user's requests under the
 * pending cap. NO KEY UPDATE, as store/users.ts lockUser: sends and reads referencing them do not
 * wait. Returns the kinds of the users found.
 */
export async function lockUserPair(conn: Conn, a: number, b: number): Promise<Map<number, UserKind>> {
  const rows = await conn.$queryRaw<{ id: bigint; kind: UserKind }[]>`
    SELECT id, kind FROM users WHERE id IN (${a}, ${b}) ORDER BY id FOR NO KEY UPDATE`
  return new Map(rows.map((r) => [Number(r.id), r.kind]))
}

export type PairRead = { state: FriendshipState; blocked: boolean; pendingOutgoing: number }

/** The pair as `userId` sees it, whether either blocks the other, and how many requests `userId` has pending. */
export async function readPair(conn: Conn, userId: number, peerId: number): Promise<PairRead> {
  const rows = await conn.$queryRaw<{ state: FriendshipState | null; blocked: boolean; pending: number }[]>`
    SELECT (SELECT state FROM friendships WHERE user_id = ${userId} AND peer_id = ${peerId}) AS state,
      EXISTS (SELECT 1 FROM user_blocks WHERE (blocker_id, blocked_id) IN ((${userId}, ${peerId}), (${peerId}, ${userId}))) AS blocked,
      (SELECT count(*)::int FROM friendships WHERE user_id = ${userId} AND state = 'REQUESTED_BY_VIEWER') AS pending`
  const row = rows[0]!
  return { state: row.state ?? 'NONE', blocked: row.blocked, pendingOutgoing: row.pending }
}

/** Sets the pair's state as `userId` sees it, and the mirrored state of the peer's row. */
export async function writePair(conn: Conn, userId: number, peerId: number, state: FriendshipState): Promise<void> {
  await conn.$executeRaw`
    INSERT INTO friendships (user_id, peer_id, state) VALUES
      (${userId}, ${peerId}, ${state}::"FriendshipState"), (${peerId}, ${userId}, ${MIRROR[state]}::"FriendshipState")
    ON CONFLICT (user_id, peer_id) DO UPDATE SET state = EXCLUDED.state, changed_at = clock_timestamp()`
}

/** The pair's state as `userId` sees it, for each of `peerIds` (absent: NONE). */
export async function findFriendshipStates(
  conn: Conn,
  userId: number,
  peerIds: readonly number[],
): Promise<Map<number, FriendshipState>> {
  const rows = await queryPooled<{ peerId: number; state: FriendshipState }>(
    conn,
    Prisma.sql`SELECT peer_id AS "peerId", state FROM friendships WHERE user_id = ${userId} AND peer_id = ANY(${bigintArray(peerIds)})`,
  )
  return new Map(rows.map((r) => [r.peerId, r.state]))
}

/** Whether each pair of users (PRIVATE conversations' peers) are friends, as a SQL condition on two id expressions. */
const areFriends = (userId: Prisma.Sql, peerId: Prisma.Sql) =>
  Prisma.sql`EXISTS (SELECT 1 FROM friendships f WHERE f.user_id = ${userId} AND f.peer_id = ${peerId} AND f.state = 'FRIENDS')`

/** The viewer's friends by display name, then handle, after `after`. */
export async function listFriends(
  conn: Conn,
  userId: number,
  after: { displayName: string; handle: string } | null,
  limit: number,
): Promise<UserRecord[]> {
  const rows = await queryPooled<Parameters<typeof toUser>[0]>(
    conn,
    Prisma.sql`
    SELECT ${USER_COLUMNS} FROM friendships f JOIN users u ON u.id = f.peer_id
    WHERE f.user_id = ${userId} AND f.state = 'FRIENDS'
      ${after ? Prisma.sql`AND (u.display_name, u.handle) > (${after.displayName}, ${after.handle})` : Prisma.empty}
    ORDER BY u.display_name, u.handle
    LIMIT ${limit}`,
  )
  return rows.map(toUser)
}

export type FriendRequestRecord = { user: UserRecord; requestedAt: Date }

/** Users who asked the viewer and are waiting for an answer, newest request first, after `after`. */
export async function listFriendRequests(
  conn: Conn,
  userId: number,
  after: { requestedAt: Date; userId: number } | null,
  limit: number,
): Promise<FriendRequestRecord[]> {
  const rows = await queryPooled<Parameters<typeof toUser>[0] & { requestedAt: Date }>(
    conn,
    Prisma.sql`
    SELECT ${USER_COLUMNS}, f.changed_at AS "requestedAt" FROM friendships f JOIN users u ON u.id = f.peer_id
    WHERE f.user_id = ${userId} AND f.state = 'REQUESTED_BY_THEM'
      ${after ? Prisma.sql`AND (f.changed_at, f.peer_id) < (${after.requestedAt}, ${after.userId})` : Prisma.empty}
    ORDER BY f.changed_at DESC, f.peer_id DESC
    LIMIT ${limit}`,
  )
  return rows.map((r) => ({ user: toUser(r), requestedAt: r.requestedAt }))
}

/**
 * For a PRIVATE conversation (`conversationId`, an id expression) and some of its members
 * (`userIds`, a bigint[] expression): each one's peer's kind and whether they are friends, as JSON
 * [userId, kind, friends] triples (PRIVATE_CHAT_POLICY, read under the conversation lock).
 */
export const privatePeersSql = (conversationId: Prisma.Sql, userIds: Prisma.Sql) => Prisma.sql`(
  SELECT coalesce(json_agg(json_build_array(w.user_id, pu.kind, ${areFriends(Prisma.sql`w.user_id`, Prisma.sql`pu.id`)})), '[]')
  FROM unnest(${userIds}) w(user_id)
  JOIN conversation_members peer ON peer.conversation_id = ${conversationId} AND peer.user_id <> w.user_id
  JOIN users pu ON pu.id = peer.user_id)`

export type PrivatePeerTuple = [userId: number, kind: UserKind, friends: boolean]

/** The other user of a would-be private chat, as PRIVATE_CHAT_POLICY needs it; null when there is no such user. */
export async function findPrivatePeer(
  conn: Conn,
  userId: number,
  peerId: number,
): Promise<{ kind: UserKind; friends: boolean } | null> {
  const rows = await queryPooled<{ kind: UserKind; friends: boolean }>(
    conn,
    Prisma.sql`SELECT pu.kind, ${areFriends(Prisma.sql`${userId}::bigint`, Prisma.sql`pu.id`)} AS friends FROM users pu WHERE pu.id = ${peerId}`,
  )
  return rows[0] ?? null
}

/** privatePeersSql for one member of one PRIVATE conversation (an edit, under the lock editMessage holds). */
export async function findPeerOfPrivate(
  conn: Conn,
  conversationId: number,
  userId: number,
): Promise<{ kind: UserKind; friends: boolean } | null> {
  const rows = await conn.$queryRaw<{ peers: PrivatePeerTuple[] }[]>`
    SELECT ${privatePeersSql(Prisma.sql`${conversationId}::bigint`, bigintArray([userId]))} AS peers`
  const [peer] = rows[0]!.peers
  return peer ? { kind: peer[1], friends: peer[2] } : null
}
