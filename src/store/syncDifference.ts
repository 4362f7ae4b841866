import type { Db } from '../db/client.ts'
import { ACCESS_TUPLE, accessFromTuple, type AccessTuple, type ConversationAccess } from './conversations.ts'
import { currentMembership, readerMembership, visibleTo } from './fragments.ts'
import { queryPooled } from './pooled.ts'
import { dateFromMs, type MessageStatus } from './records.ts'
import { Prisma, bigintArray, epochMs, plannedPerCall } from './sql.ts'
import { viewerStatesSql, type ViewerState } from './userActions.ts'
import { threadStateSource } from './syncThreads.ts'
import {
  CONVERSATION_CHANGE,
  FRIENDSHIP_CHANGE,
  MEMBERSHIP_CHANGE,
  MESSAGE_STATE_CHANGE,
  headsOf,
  headsSql,
  type HeadsRow,
  type Snapshot,
  type SyncChange,
  type SyncKey,
  type SyncRange,
} from './sync.ts'

/**
 * Account sync's difference: the changes a viewer has not seen since a snapshot, read from every
 * source in one statement (decisions 0160, 0210, 0230); store/sync.ts holds the snapshots and keys.
 */

/** What a source's rows are not visible in: every xid below the snapshot's xmin is, so the index range starts there. */
const unseenBy = (xid: Prisma.Sql, snapshot: Snapshot) =>
  Prisma.sql`${xid} >= pg_snapshot_xmin(${snapshot}::pg_snapshot) AND NOT pg_visible_in_snapshot(${xid}, ${snapshot}::pg_snapshot)`

/**
 * One source of changes, of one kind: `columns` its key after the xid as the sort key has it,
 * `indexed` how many of them its sync index holds after the xid, so a position is an index bound.
 */
type Source = {
  kind: number
  xid: Prisma.Sql
  columns: Prisma.Sql[]
  indexed: number
  rows: (where: Prisma.Sql, limit: number) => Prisma.Sql
}

/** A source's rows sorting after `k`: the index range starts at `k` (exact on the indexed columns, the rest filtered). */
function sortsAfter(source: Source, k: SyncKey): Prisma.Sql {
  const kxid = Prisma.sql`${k.xid}::xid8`
  if (source.kind !== k.kind)
    return source.kind < k.kind ? Prisma.sql`${source.xid} > ${kxid}` : Prisma.sql`${source.xid} >= ${kxid}`
  const values = [
    Prisma.sql`${k.conversationId}::bigint`,
    Prisma.sql`${k.seq}::bigint`,
    Prisma.sql`${k.action}::text`,
  ].slice(0, source.columns.length)
  const row = (n: number) => [
    Prisma.join([source.xid, ...source.columns.slice(0, n)]),
    Prisma.join([kxid, ...values.slice(0, n)]),
  ]
  const [all, allValues] = row(source.columns.length)
  if (source.indexed === source.columns.length) return Prisma.sql`(${all}) > (${allValues})`
  const [bound, boundValues] = row(source.indexed)
  return Prisma.sql`(${bound}) >= (${boundValues}) AND (${all}) > (${allValues})`
}

/**
 * A source's changes in `range`, each part ordered by its index and limited on its own, so a batch
 * reads about `limit` rows of each part however far into the difference it is: the first part from
 * the position to `mid`'s xmax, the second from `mid`'s xmin (disjoint: `mid` sees one, not the other).
 */
function parts(source: Source, range: SyncRange, limit: number): Prisma.Sql[] {
  const part = (late: boolean, where: Prisma.Sql) =>
    Prisma.sql`(SELECT ${Prisma.raw(String(late))} AS late, * FROM ${source.rows(where, limit)} r)`
  const fresh = unseenBy(source.xid, range.since)
  if (!range.mid) return [part(true, fresh)]
  const mid = Prisma.sql`${range.mid}::pg_snapshot`
  const seen = Prisma.sql`${source.xid} < pg_snapshot_xmax(${mid}) AND pg_visible_in_snapshot(${source.xid}, ${mid})`
  const position = range.after ? Prisma.sql` AND ${sortsAfter(source, range.after)}` : Prisma.empty
  return [
    part(false, Prisma.sql`${fresh} AND ${seen}${position}`),
    part(true, Prisma.sql`${fresh} AND ${unseenBy(source.xid, range.mid)}`),
  ]
}

/**
 * Up to `limit` changes for `userId` in `range`, the first part first, each part oldest transaction
 * first. Each source is an index range scan: the viewer's own rows by (user_id, sync_xid, …),
 * conversations by (sync_xid, id) joined to the viewer's current memberships (or the memberships
 * probed, whichever the planner finds smaller), so the cost follows the changes, not the viewer's
 * conversations.
 */
const changesSql = (userId: number, range: SyncRange, limit: number) => {
  const floorIds = bigintArray(range.floors.map(([id]) => id))
  const floorPts = bigintArray(range.floors.map(([, pts]) => pts))
  const sources: Source[] = [
    {
      kind: CONVERSATION_CHANGE,
      xid: Prisma.sql`c.sync_xid`,
      columns: [Prisma.sql`c.id`],
      indexed: 1,
      rows: (
        where,
        n,
      ) => Prisma.sql`(SELECT c.sync_xid AS x, 0 AS kind, c.id AS "conversationId", 0::bigint AS seq, ''::text AS action, false AS "left"
        FROM conversations c JOIN conversation_members m ON m.conversation_id = c.id AND m.user_id = ${userId} AND m.left_at IS NULL
        WHERE ${where} AND NOT EXISTS (SELECT 1 FROM unnest(${floorIds}, ${floorPts}) f(id, pts) WHERE f.id = c.id AND f.pts = c.last_pts)
        ORDER BY c.sync_xid, c.id LIMIT ${n})`,
    },
    {
      kind: MEMBERSHIP_CHANGE,
      xid: Prisma.sql`m.sync_xid`,
      columns: [Prisma.sql`m.conversation_id`],
      indexed: 1,
      rows: (
        where,
        n,
      ) => Prisma.sql`(SELECT m.sync_xid AS x, 1 AS kind, m.conversation_id AS "conversationId", 0::bigint AS seq, ''::text AS action, m.left_at IS NOT NULL AS "left"
        FROM conversation_members m WHERE m.user_id = ${userId} AND ${where}
        ORDER BY m.sync_xid, m.conversation_id LIMIT ${n})`,
    },
    {
      kind: MESSAGE_STATE_CHANGE,
      xid: Prisma.sql`a.sync_xid`,
      columns: [Prisma.sql`a.conversation_id`, Prisma.sql`a.seq`, Prisma.sql`a.action::text`],
      indexed: 2,
      rows: (
        where,
        n,
      ) => Prisma.sql`(SELECT a.sync_xid AS x, 2 AS kind, a.conversation_id AS "conversationId", a.seq, a.action::text AS action, false AS "left"
        FROM message_user_actions a WHERE a.user_id = ${userId} AND ${where}
        ORDER BY a.sync_xid, a.conversation_id, a.seq, a.action::text LIMIT ${n})`,
    },
    {
      // The state rides in `action`, outside the sort key: one row per peer, so the key is (xid, peer).
      kind: FRIENDSHIP_CHANGE,
      xid: Prisma.sql`f.sync_xid`,
      columns: [Prisma.sql`f.peer_id`],
      indexed: 1,
      rows: (
        where,
        n,
      ) => Prisma.sql`(SELECT f.sync_xid AS x, 3 AS kind, f.peer_id AS "conversationId", 0::bigint AS seq, f.state::text AS action, false AS "left"
        FROM friendships f WHERE f.user_id = ${userId} AND ${where}
        ORDER BY f.sync_xid, f.peer_id LIMIT ${n})`,
    },
    threadStateSource(userId),
  ]
  return Prisma.sql`${Prisma.join(
    sources.flatMap((source) => parts(source, range, limit)),
    ' UNION ALL ',
  )}
    ORDER BY late, x, kind, "conversationId", seq, action
    LIMIT ${limit}`
}

/** A change with what it names as of the difference's snapshot: a conversation with the viewer's membership, or a message state. */
export type DifferenceChange = SyncChange & {
  access: ConversationAccess | null
  /** The viewer's stored state of the message (null: no ACTIVE action), and its status when the viewer may see it. */
  state: { stored: ViewerState | null; visibleStatus: MessageStatus | null } | null
}

/**
 * A change as a JSON array in this order, all of a difference in one JSON value: pg reads one field,
 * where a row per change of some thirty columns cost it about 10 µs each (2,000 changes: 20 ms of a
 * resumed account stream's CPU); timestamps come as epoch milliseconds.
 */
type ChangeTuple = [
  late: boolean,
  xid: string,
  kind: number,
  conversationId: number,
  seq: number,
  action: string,
  left: boolean,
  access: AccessTuple | null,
  favorite: boolean | null,
  deletedForMe: boolean | null,
  remindAt: number | null,
  visibleStatus: MessageStatus | null,
]

/**
 * The difference after `range` at one snapshot, in ONE statement, so no transaction is needed: a
 * statement reads at one snapshot, and `pg_current_snapshot()` inside it is that snapshot (decision
 * 0160). Up to `limit` changes, each with its conversation and the viewer's membership (conversation
 * and membership changes) or the viewer's state of the message and, when the viewer may see the
 * message, its status (message-state changes); and whether `range.since` is ahead of the snapshot
 * (a token from another or a restored database); and at the same snapshot the last_pts of each of
 * `heads` (readHeads). Planned per call: a kept generic plan cannot know
 * that `sync_xid >= xmin` selects a handful of rows, and would scan every membership instead.
 */
export async function readSyncDifference(
  db: Db,
  userId: number,
  range: SyncRange,
  limit: number,
  heads: readonly number[] = [],
): Promise<{ snapshot: Snapshot; ahead: boolean; changes: DifferenceChange[]; heads: Map<number, number> }> {
  const reader = { userId }
  const rows = await queryPooled<HeadsRow & { snapshot: string; ahead: boolean | null; changes: ChangeTuple[] }>(
    db,
    Prisma.sql`${plannedPerCall}
    WITH ch AS MATERIALIZED (${changesSql(userId, range, limit)}),
    states AS (${viewerStatesSql(userId, Prisma.sql`(SELECT DISTINCT "conversationId" AS conversation_id, seq FROM ch WHERE kind = 2) k`)})
    SELECT s.snapshot::text AS snapshot, pg_snapshot_xmax(${range.since}::pg_snapshot) > pg_snapshot_xmax(s.snapshot) AS ahead, h.*,
      (SELECT coalesce(json_agg(json_build_array(ch.late, ch.x::text, ch.kind, ch."conversationId", ch.seq, ch.action, ch."left",
          CASE WHEN c.id IS NULL THEN NULL ELSE ${ACCESS_TUPLE} END, st.favorite, st."deletedForMe", ${epochMs('st."remindAt"')}, shown.status)
        ORDER BY ch.late, ch.x, ch.kind, ch."conversationId", ch.seq, ch.action), '[]')
      FROM ch
      LEFT JOIN conversations c ON ch.kind < 2 AND NOT ch."left" AND c.id = ch."conversationId" ${currentMembership(userId)}
      LEFT JOIN states st ON ch.kind = 2 AND st."conversationId" = ch."conversationId" AND st.seq = ch.seq
      LEFT JOIN LATERAL (
        SELECT m.status FROM messages m ${readerMembership(reader)}
        WHERE ch.kind = 2 AND m.conversation_id = ch."conversationId" AND m.seq = ch.seq AND ${visibleTo(reader)}) shown ON true) AS changes
    FROM (SELECT pg_current_snapshot() AS snapshot) s CROSS JOIN ${headsSql(heads)}`,
  )
  const row = rows[0]!
  const changes = row.changes.map(
    ([
      late,
      xid,
      kind,
      conversationId,
      seq,
      action,
      left,
      access,
      favorite,
      deletedForMe,
      remindAt,
      visibleStatus,
    ]): DifferenceChange => ({
      xid,
      kind,
      conversationId,
      seq,
      action,
      left,
      late,
      access: access && accessFromTuple(access),
      state:
        kind === MESSAGE_STATE_CHANGE
          ? {
              stored:
                favorite === null ? null : { favorite, deletedForMe: deletedForMe!, remindAt: dateFromMs(remindAt) },
              visibleStatus,
            }
          : null,
    }),
  )
  return { snapshot: row.snapshot, ahead: row.ahead === true, changes, heads: headsOf(row) }
}
