import type { ConversationType } from '../generated/prisma/enums.ts'
import { type ConversationAccess, type ConversationRow, type MemberRow } from './conversations.ts'
import { CONVERSATION_COLUMNS, MEMBER_COLUMNS } from './fragments.ts'
import { queryPooled } from './pooled.ts'
import { toConversation, toMember } from './records.ts'
import { Prisma, limitLiteral, type Conn } from './sql.ts'

/** Where a conversation stands in the viewer's list: pinned ones first by pin time, then the rest by last activity. */
type InboxKey = { pinned: boolean; at: Date; id: number }
export type InboxEntry = ConversationAccess & { key: InboxKey }
export type InboxQuery = {
  type: ConversationType | null
  archived: boolean | null
  after: InboxKey | null
  limit: number
}

/**
 * How the unpinned part is found (decision 0150). The walk reads the newest conversations of the
 * whole database and keeps the viewer's; it is tried only for a viewer with at least WALK_SHARE pages
 * of conversations, and reads at most 1/WALK_SHARE of them (and at most WALK_MAX), so when it comes
 * back short and the sort of the viewer's own conversations has to run after it, the two together cost
 * at most (1 + 1/WALK_SHARE) × the sort alone. The viewer's conversations are counted up to
 * WALK_SHARE × WALK_MAX, all the bound needs.
 */
const WALK_MAX = 500
const WALK_SHARE = 4
const COUNT_CAP = WALK_SHARE * WALK_MAX

const sql = Prisma.sql

/**
 * The viewer's current conversations (archived ones, the others, or with null both) in list order,
 * keyset-paged on InboxKey, in one statement: the pinned part from the viewer's settings rows, the
 * unpinned part from a bounded walk of the newest conversations or, when that walk does not fill the
 * page, from a sort of the viewer's own. Which one runs is decided inside the statement, so its plan
 * is the same for every viewer and PostgreSQL can keep it.
 */
export async function listInbox(conn: Conn, userId: number, opts: InboxQuery): Promise<InboxEntry[]> {
  // Through the pool, as the page's other reads: its rows mapped once, not by Prisma column by column (decision 0205).
  const rows = await queryPooled<ConversationRow & MemberRow & { pinned: boolean; sortAt: Date }>(
    conn,
    inboxStatement(userId, opts),
  )
  return rows.map((r) => ({
    conversation: toConversation(r),
    member: toMember(r),
    key: { pinned: r.pinned, at: r.sortAt, id: Number(r.id) },
  }))
}

/** The statement listInbox runs (the bench EXPLAINs it). */
export function inboxStatement(userId: number, { type, archived, after, limit }: InboxQuery): Prisma.Sql {
  const n = limitLiteral(limit)
  // The viewer reaches the plan only through the CTE `me`, so no plan is specialized on who calls:
  // otherwise a connection's first five calls decide, and after a small viewer's (whose custom plans
  // look cheaper than the generic one) PostgreSQL plans the statement on every call, 2–3 ms each (decision 0215).
  const me = sql`(SELECT id FROM me)`
  const archivedIs = archived === null ? Prisma.empty : sql`AND cs.archived = ${archived}`
  // Listed unpinned: no settings row at all (unless only archived ones are listed), or one unpinned in this list.
  const unpinned = sql`cs.pinned_at IS NULL ${archivedIs}`
  const listedWithoutRow = archived !== true
  const ofType = (alias: string) =>
    type ? sql`AND ${Prisma.raw(alias)}.type = ${type}::"ConversationType"` : Prisma.empty
  const afterPinned =
    after === null
      ? Prisma.empty
      : after.pinned
        ? sql`AND (cs.pinned_at, c.id) < (${after.at}, ${after.id})`
        : sql`AND false`
  const afterActivity =
    after && !after.pinned ? sql`AND (c.last_activity_at, c.id) < (${after.at}, ${after.id})` : Prisma.empty
  // The viewer's conversations this list draws from: every current membership, or the archived settings rows.
  const [own, ownListed] = listedWithoutRow
    ? [
        sql`conversation_members cm LEFT JOIN conversation_settings cs ON cs.conversation_id = cm.conversation_id AND cs.user_id = cm.user_id`,
        sql`cm.user_id = ${me} AND cm.left_at IS NULL AND (cs.user_id IS NULL OR (${unpinned}))`,
      ]
    : [
        sql`conversation_settings cs JOIN conversation_members cm ON cm.conversation_id = cs.conversation_id AND cm.user_id = cs.user_id`,
        sql`cs.user_id = ${me} AND cm.left_at IS NULL AND ${unpinned}`,
      ]
  const counted = listedWithoutRow
    ? sql`SELECT FROM conversation_members WHERE user_id = ${me} AND left_at IS NULL`
    : sql`SELECT FROM conversation_settings cs WHERE cs.user_id = ${me} AND cs.archived`
  const settingsOf = sql`conversation_settings cs WHERE cs.conversation_id = w.id AND cs.user_id = ${me}`
  const keptByWalk = listedWithoutRow
    ? sql`NOT EXISTS (SELECT FROM ${settingsOf} AND NOT (${unpinned}))`
    : sql`EXISTS (SELECT FROM ${settingsOf} AND ${unpinned})`
  // The newest conversations anywhere from the cursor on, `walk.size` of them (an index range, no filter, so the LIMIT bounds what is read).
  const newest = (columns: Prisma.Sql) => sql`SELECT ${columns} FROM conversations c WHERE true ${afterActivity}
    ORDER BY c.last_activity_at DESC, c.id DESC LIMIT (SELECT size FROM walk)`
  return sql`
    WITH me AS MATERIALIZED (SELECT ${userId}::bigint AS id),
    viewer AS MATERIALIZED (SELECT count(*)::int AS n FROM (${counted} LIMIT ${limitLiteral(COUNT_CAP)}) s),
    walk AS MATERIALIZED (SELECT n >= ${limitLiteral(WALK_SHARE)} * ${n} AS tried, least(${limitLiteral(WALK_MAX)}, n / ${limitLiteral(WALK_SHARE)}) AS size FROM viewer),
    pinned AS (
      SELECT true AS pinned, cs.pinned_at AS at, c.id FROM conversation_settings cs
      JOIN conversation_members cm ON cm.conversation_id = cs.conversation_id AND cm.user_id = cs.user_id AND cm.left_at IS NULL
      JOIN conversations c ON c.id = cs.conversation_id
      WHERE cs.user_id = ${me} AND cs.pinned_at IS NOT NULL ${archivedIs} ${ofType('c')} ${afterPinned}
      ORDER BY cs.pinned_at DESC, c.id DESC LIMIT ${n}),
    found AS MATERIALIZED (
      -- Filters per row (EXISTS), in the walk's order, so the LIMIT stops the walk once the page is full.
      SELECT w.id, w.at FROM (${newest(sql`c.id, c.last_activity_at AS at, c.type`)}) w
      WHERE (SELECT tried FROM walk) ${ofType('w')}
        AND EXISTS (SELECT FROM conversation_members cm WHERE cm.conversation_id = w.id AND cm.user_id = ${me} AND cm.left_at IS NULL)
        AND ${keptByWalk}
      ORDER BY w.at DESC, w.id DESC LIMIT ${n}),
    -- The walk answers when it filled the page or read every conversation there is past the cursor.
    answered AS MATERIALIZED (SELECT (SELECT tried FROM walk)
      AND ((SELECT count(*) FROM found) = ${n} OR (SELECT count(*) FROM (${newest(Prisma.empty)}) x) < (SELECT size FROM walk)) AS yes),
    -- Materialized, so the planner cannot turn this sort into a LIMIT walk of the activity index (the trap).
    sorted AS MATERIALIZED (
      SELECT c.id, c.last_activity_at AS at FROM ${own} JOIN conversations c ON c.id = cm.conversation_id
      WHERE ${ownListed} AND NOT (SELECT yes FROM answered) ${ofType('c')} ${afterActivity}),
    page AS (
      (TABLE pinned)
      UNION ALL (SELECT false, at, id FROM found WHERE (SELECT yes FROM answered))
      UNION ALL (SELECT false, at, id FROM sorted ORDER BY at DESC, id DESC LIMIT ${n})
      ORDER BY 1 DESC, 2 DESC, 3 DESC LIMIT ${n})
    -- The membership as plain columns, not as JSON: every listed row has one, and building each row's JSON cost more (decision 0215).
    SELECT ${CONVERSATION_COLUMNS}, ${MEMBER_COLUMNS}, p.pinned, p.at AS "sortAt"
    FROM page p JOIN conversations c ON c.id = p.id
    JOIN conversation_members cm ON cm.conversation_id = p.id AND cm.user_id = ${me}
    ORDER BY p.pinned DESC, p.at DESC, p.id DESC`
}
