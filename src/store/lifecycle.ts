import type { MessageKey } from '../domain/core/index.ts'
import { MESSAGE_COLUMNS, notRecalled } from './fragments.ts'
import { indexChanged, unindexChanged, type SearchDocument } from './searchDocuments.ts'
import { toMessage, type MessageRecord, type MessageRow } from './records.ts'
import { queryPooled } from './pooled.ts'
import { Prisma, bigintArray, type Conn } from './sql.ts'

/** An earlier version of a message's content; editedAt is when that version was written. */
export type MessageEditRecord = MessageKey & { version: number; content: unknown; editedAt: Date }

export const oneMessage = (key: MessageKey) =>
  Prisma.sql`m.conversation_id = ${key.conversationId} AND m.seq = ${key.seq}`

/**
 * Runs `change` (an UPDATE of messages m … RETURNING MESSAGE_COLUMNS, as CTE `changed`) and moves the
 * conversation's last_pts to `pts` in the same statement when it changed a row. The caller holds the
 * conversation row lock, so `pts` is the next one. `alongside` adds CTEs that run only with it.
 */
export async function changeWithPts(
  conn: Conn,
  conversationId: number,
  pts: number,
  change: Prisma.Sql,
  alongside = Prisma.empty,
): Promise<MessageRecord | null> {
  const rows = await conn.$queryRaw<MessageRow[]>`
    WITH changed AS (${change} RETURNING ${MESSAGE_COLUMNS}),
    conv AS (UPDATE conversations SET last_pts = ${pts} WHERE id = ${conversationId} AND EXISTS (SELECT 1 FROM changed))
    ${alongside}
    SELECT * FROM changed`
  return rows[0] ? toMessage(rows[0]) : null
}

/**
 * Replaces the content of a message that is not recalled: the current version goes to message_edits
 * (stamped with when it was written: sent_at, or the edit that wrote it), the message becomes EDITED
 * with `pts`, and its search document is replaced (null: left alone). Null when the message is
 * recalled (recall is terminal).
 */
export function replaceContent(
  conn: Conn,
  key: MessageKey,
  change: {
    content: unknown
    pts: number
    searchDocument: SearchDocument | null
    /** Mentions the new text adds (its ranges); those the message had stay. */
    mentions: { userIds: readonly number[]; all: boolean }
  },
): Promise<MessageRecord | null> {
  const added = bigintArray(change.mentions.userIds)
  // Every sub-statement reads the snapshot from before the UPDATE, so `old` is the replaced version.
  const keep = Prisma.sql`, kept AS (
    INSERT INTO message_edits (conversation_id, seq, version, content, edited_at)
    SELECT m.conversation_id, m.seq,
      COALESCE((SELECT max(e.version) FROM message_edits e WHERE e.conversation_id = m.conversation_id AND e.seq = m.seq), 0) + 1,
      m.content, COALESCE(m.edited_at, m.sent_at)
    FROM messages m WHERE ${oneMessage(key)} AND EXISTS (SELECT 1 FROM changed))`
  return changeWithPts(
    conn,
    key.conversationId,
    change.pts,
    Prisma.sql`UPDATE messages m SET content = ${JSON.stringify(change.content)}::jsonb, status = 'EDITED', edited_at = clock_timestamp(), pts = ${change.pts},
        mention_user_ids = m.mention_user_ids || ARRAY(SELECT u FROM unnest(${added}) u WHERE u <> ALL(m.mention_user_ids)),
        mention_all = m.mention_all OR ${change.mentions.all}
      WHERE ${oneMessage(key)} AND ${notRecalled}`,
    Prisma.sql`${keep} ${indexChanged(change.searchDocument)}`,
  )
}

/**
 * For a recall (CTEs beside the UPDATE, as `changed`): the earlier versions go with the content, and
 * so does the content of the webhook outbox's snapshots and bodies of the message, which then
 * reads as recalled to any delivery still to be sent.
 */
const purgeEdits = Prisma.sql`, purged AS (
  DELETE FROM message_edits e USING changed c WHERE e.conversation_id = c."conversationId" AND e.seq = c.seq),
  unsent AS (
  UPDATE webhook_deliveries d SET body = NULL,
    snapshot = jsonb_set(jsonb_set(d.snapshot, '{message,content}', 'null'::jsonb), '{message,status}', '"RECALLED"'::jsonb)
  FROM changed c WHERE d.conversation_id = c."conversationId" AND d.seq = c.seq AND d.snapshot IS NOT NULL)`

/**
 * Turns a message into a tombstone with `pts` (`removed`: an operator's takedown, shown as
 * REMOVED). With `purge` its content (a JSON null) and its earlier versions are erased in the same
 * statement, so a recalled text is nowhere in the database afterwards (issue 45); without (legal
 * hold) they stay for operators. Its search document goes either way: members never find it.
 * With `sentWithinSeconds` only a message sent less than that long ago (by the database clock,
 * which stamped sent_at) qualifies. Null when nothing qualified (already recalled, or outside the window).
 */
export function markRecalled(
  conn: Conn,
  key: MessageKey,
  change: { pts: number; recalledById: number; sentWithinSeconds: number | null; purge: boolean; removed?: boolean },
): Promise<MessageRecord | null> {
  const window =
    change.sentWithinSeconds === null
      ? Prisma.empty
      : Prisma.sql`AND m.sent_at > clock_timestamp() - make_interval(secs => ${change.sentWithinSeconds}::float8)`
  const content = change.purge ? Prisma.sql`'null'::jsonb` : Prisma.sql`m.content`
  return changeWithPts(
    conn,
    key.conversationId,
    change.pts,
    Prisma.sql`UPDATE messages m SET status = 'RECALLED', content = ${content}, recalled_at = clock_timestamp(),
        recalled_by_id = ${change.recalledById}, pts = ${change.pts}, removed = ${change.removed ?? false}
      WHERE ${oneMessage(key)} AND ${notRecalled} ${window}`,
    Prisma.sql`${unindexChanged} ${change.purge ? purgeEdits : Prisma.empty}`,
  )
}

/**
 * Erases what recalls under a legal hold kept (their content and earlier versions), once the hold
 * is lifted; returns how many messages it erased.
 */
export async function purgeKeptRecalls(conn: Conn, conversationId: number): Promise<number> {
  const rows = await conn.$queryRaw<{ n: number }[]>`
    WITH kept AS (
      UPDATE messages m SET content = 'null'::jsonb
      WHERE m.conversation_id = ${conversationId} AND m.status = 'RECALLED' AND m.content <> 'null'::jsonb
      RETURNING m.conversation_id, m.seq),
    edits AS (
      DELETE FROM message_edits e USING messages m
      WHERE e.conversation_id = ${conversationId} AND m.conversation_id = e.conversation_id AND m.seq = e.seq
        AND m.status = 'RECALLED')
    SELECT count(*)::int AS n FROM kept`
  return rows[0]!.n
}

/** One message as stored, whoever may see it (operators' actions); null when there is none. */
export async function findMessage(conn: Conn, key: MessageKey): Promise<MessageRecord | null> {
  const rows = await conn.$queryRaw<MessageRow[]>`SELECT ${MESSAGE_COLUMNS} FROM messages m WHERE ${oneMessage(key)}`
  return rows[0] ? toMessage(rows[0]) : null
}

/** The earlier versions of each message, oldest first. */
export async function findEdits(conn: Conn, keys: readonly MessageKey[]): Promise<MessageEditRecord[]> {
  const rows = await queryPooled<{
    conversationId: number | bigint
    seq: number | bigint
    version: number
    content: unknown
    editedAt: Date
  }>(
    conn,
    Prisma.sql`
    SELECT e.conversation_id AS "conversationId", e.seq, e.version, e.content, e.edited_at AS "editedAt"
    FROM unnest(${bigintArray(keys.map((k) => k.conversationId))}, ${bigintArray(keys.map((k) => k.seq))}) AS k(conversation_id, seq)
    JOIN message_edits e ON e.conversation_id = k.conversation_id AND e.seq = k.seq
    ORDER BY e.conversation_id, e.seq, e.version`,
  )
  return rows.map((r) => ({
    conversationId: Number(r.conversationId),
    seq: Number(r.seq),
    version: r.version,
    content: r.content,
    editedAt: r.editedAt,
  }))
}
