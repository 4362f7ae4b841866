import { Prisma, bigintArray } from './sql.ts'
import { threadStateSource } from './syncThreads.ts'
import {
  CONVERSATION_CHANGE,
  FRIENDSHIP_CHANGE,
  MEMBERSHIP_CHANGE,
  MESSAGE_STATE_CHANGE,
  type Snapshot,
  type SyncKey,
  type SyncRange,
} from './sync.ts'

/**
 * Account sync's sources (conversations, memberships, message states, friendships, thread states):
 * each a keyset range of rows whose sync_xid the viewer has not seen, merged in one ordered
 * statement that store/syncDifference.ts wraps (decisions 0160, 0210, 0230).
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
export const changesSql = (userId: number, range: SyncRange, limit: number) => {
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
