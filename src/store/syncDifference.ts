import type { Db } from '../db/client.ts'
import { ACCESS_TUPLE, accessFromTuple, type AccessTuple, type ConversationAccess } from './conversations.ts'
import { currentMembership, readerMembership, visibleTo } from './fragments.ts'
import { queryPooled } from './pooled.ts'
import { dateFromMs, type MessageStatus } from './records.ts'
import { Prisma, epochMs, plannedPerCall } from './sql.ts'
import { changesSql } from './syncSources.ts'
import { viewerStatesSql, type ViewerState } from './userActions.ts'
import {
  MESSAGE_STATE_CHANGE,
  headsOf,
  headsSql,
  type HeadsRow,
  type Snapshot,
  type SyncChange,
  type SyncRange,
} from './sync.ts'

/**
 * Account sync's difference: the changes a viewer has not seen since a snapshot, read from every
 * source in one statement (decisions 0160, 0210, 0230); store/sync.ts holds the snapshots and keys.
 */

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
