import type { Db } from '../db/client.ts'
import { queryPooled } from './pooled.ts'
import { Prisma, bigintArray, type Conn } from './sql.ts'

/**
 * Account-level sync (decision 0080): what changed for one user between two database snapshots.
 * Rows carry `sync_xid`, the transaction that last changed them (set by triggers, see the sync
 * migration). A change is "after" a snapshot when that snapshot does not see its transaction: the
 * test is visibility, not a number's order, so a transaction that took its id early and committed
 * late is still after a snapshot taken before it committed.
 */

/** A snapshot as PostgreSQL writes it (`xmin:xmax:xip,…`). */
export type Snapshot = string

/** Where a batch stopped, in the order changes are returned (their transaction, then what changed). */
export type SyncKey = { xid: string; kind: number; conversationId: number; seq: number; action: string }

/**
 * "After `since`", in two parts (decision 0210): first what `mid` (the snapshot a previous batch of
 * the same difference was read at) sees and that sorts after `after`, then everything `mid` does not
 * see. Without `mid`, everything `since` does not see. `floors` are conversations already delivered
 * up to exactly that pts (a live stream's MessageEvents).
 */
export type SyncRange = {
  since: Snapshot
  mid: Snapshot | null
  after: SyncKey | null
  floors: readonly (readonly [number, number])[]
}

/**
 * One changed thing: a conversation's pts (0), the viewer's membership (1), a message state (2), or
 * a friendship (3: `conversationId` holds the other user's id and `action` the state as the viewer
 * sees it), or the viewer's state of a thread (4: `seq` is the root's, `action` the state,
 * store/syncThreads.ts); `late`: from the second part.
 */
export type SyncChange = SyncKey & { left: boolean; late: boolean }

export const CONVERSATION_CHANGE = 0
export const MEMBERSHIP_CHANGE = 1
export const MESSAGE_STATE_CHANGE = 2
export const FRIENDSHIP_CHANGE = 3
export const THREAD_STATE_CHANGE = 4

/**
 * The range after `change`, a change of a difference after `range` read at `snapshot`. Within the
 * first part the position moves on and `mid` stays; a late change starts the difference after
 * `mid`, read at `snapshot`. So a position only moves forward: were late changes merged into one
 * order, one sorting before `after` would move it back, and the next batch would repeat what the
 * batches before delivered.
 */
export function rangeAfter(range: SyncRange, snapshot: Snapshot, change: SyncChange): SyncRange {
  const after = {
    xid: change.xid,
    kind: change.kind,
    conversationId: change.conversationId,
    seq: change.seq,
    action: change.action,
  }
  return change.late
    ? { since: range.mid ?? range.since, mid: snapshot, after, floors: range.floors }
    : { ...range, after }
}

/** The current snapshot, and whether `since` is ahead of it (a token from another or a restored database). */
export async function readSnapshot(
  conn: Conn,
  since: Snapshot | null,
): Promise<{ snapshot: Snapshot; ahead: boolean }> {
  const rows = await queryPooled<{ snapshot: string; ahead: boolean | null }>(
    conn,
    Prisma.sql`
    SELECT pg_current_snapshot()::text AS snapshot,
           pg_snapshot_xmax(${since}::pg_snapshot) > pg_snapshot_xmax(pg_current_snapshot()) AS ahead`,
  )
  return { snapshot: rows[0]!.snapshot, ahead: rows[0]!.ahead === true }
}

/**
 * The last_pts of each of `conversationIds`, as two arrays in id order: where a live stream whose
 * token stands for this statement's snapshot starts each conversation (decision 0200).
 */
export const headsSql = (conversationIds: readonly number[]) =>
  Prisma.sql`(SELECT array_agg(id ORDER BY id) AS "headIds", array_agg(last_pts ORDER BY id) AS "headPts" FROM conversations WHERE id = ANY(${bigintArray(conversationIds)})) h`

export type HeadsRow = { headIds: number[] | null; headPts: number[] | null }
export const headsOf = (row: HeadsRow | undefined) =>
  new Map((row?.headIds ?? []).map((id, i) => [id, row!.headPts![i]!]))

/** The current snapshot and, at it, the last_pts of each of `conversationIds` (a live stream's start without a difference). */
export async function readHeads(
  db: Db,
  conversationIds: readonly number[],
): Promise<{ snapshot: Snapshot; heads: Map<number, number> }> {
  const rows = await queryPooled<HeadsRow & { snapshot: string }>(
    db,
    Prisma.sql`SELECT pg_current_snapshot()::text AS snapshot, h.* FROM ${headsSql(conversationIds)}`,
  )
  return { snapshot: rows[0]!.snapshot, heads: headsOf(rows[0]) }
}

/**
 * Marks the viewer's view of these conversations changed in this transaction, so sync and
 * viewerUpdates list them: for what changes it without touching the member row (delete-for-me moves
 * unread counts and lastMessage), and the hook for per-viewer state kept beside it (settings, drafts).
 */
export async function touchMemberships(conn: Conn, userId: number, conversationIds: readonly number[]): Promise<void> {
  if (!conversationIds.length) return
  await conn.$executeRaw`
    UPDATE conversation_members SET sync_xid = pg_current_xact_id()
    WHERE user_id = ${userId} AND conversation_id = ANY(${bigintArray([...new Set(conversationIds)])})`
}
