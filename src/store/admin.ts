import type { ConversationType, MessageKind } from '../generated/prisma/enums.ts'
import { MESSAGE_COLUMNS } from './fragments.ts'
import { adminTextMatch } from './search.ts'
import { toMessage, type MessageRecord, type MessageRow } from './records.ts'
import { queryPooled } from './pooled.ts'
import { Prisma, type Conn } from './sql.ts'

export type AdminMessageQuery = {
  conversationId: number | null
  senderId: number | null
  conversationType: ConversationType | null
  kind: MessageKind | null
  sentAfter: Date | null
  sentBefore: Date | null
  /** The text match as a tsquery (store/search.ts), or null. */
  tsquery: string | null
}

/** Where a page starts: the last message of the previous page. */
export type AdminCursor = { sentAt: Date; conversationId: number; seq: number }

/**
 * Every message matching the filter, newest first, regardless of membership and visibility (the
 * operators' read-only view). Keyset-paged on (sent_at, conversation_id, seq), which the sent_at and
 * (sender_id, sent_at) indexes serve. Within one conversation seq order is sending order (seq and
 * sent_at are both taken under the conversation lock), so a conversation filter pages by seq on the
 * primary key instead. A text match pages on the matching documents' own keys (see adminTextMatch).
 */
export async function listAdminMessages(
  conn: Conn,
  filter: AdminMessageQuery,
  after: AdminCursor | null,
  limit: number,
): Promise<MessageRecord[]> {
  const conditions: Prisma.Sql[] = []
  if (filter.conversationId !== null) conditions.push(Prisma.sql`m.conversation_id = ${filter.conversationId}`)
  if (filter.senderId !== null) conditions.push(Prisma.sql`m.sender_id = ${filter.senderId}`)
  if (filter.kind !== null) conditions.push(Prisma.sql`m.kind = ${filter.kind}::"MessageKind"`)
  if (filter.sentAfter !== null) conditions.push(Prisma.sql`m.sent_at >= ${filter.sentAfter}`)
  if (filter.sentBefore !== null) conditions.push(Prisma.sql`m.sent_at < ${filter.sentBefore}`)
  if (filter.conversationType !== null) {
    conditions.push(
      Prisma.sql`EXISTS (SELECT 1 FROM conversations c WHERE c.id = m.conversation_id AND c.type = ${filter.conversationType}::"ConversationType")`,
    )
  }
  const text = filter.tsquery !== null ? adminTextMatch(filter.tsquery) : null
  const inOneConversation = filter.conversationId !== null && !text
  // The keys to page on: the document's when matching text (the same values as the message's).
  const k = text ? Prisma.sql`s` : Prisma.sql`m`
  if (after) {
    conditions.push(
      inOneConversation
        ? Prisma.sql`m.seq < ${after.seq}`
        : Prisma.sql`(${k}.sent_at, ${k}.conversation_id, ${k}.seq) < (${after.sentAt}, ${after.conversationId}, ${after.seq})`,
    )
  }
  const order = inOneConversation
    ? Prisma.sql`m.seq DESC`
    : Prisma.sql`${k}.sent_at DESC, ${k}.conversation_id DESC, ${k}.seq DESC`
  const rows = await conn.$queryRaw<MessageRow[]>`
    ${text?.with ?? Prisma.empty}
    SELECT ${MESSAGE_COLUMNS} FROM messages m ${text?.join ?? Prisma.empty}
    ${conditions.length ? Prisma.sql`WHERE ${Prisma.join(conditions, ' AND ')}` : Prisma.empty}
    ORDER BY ${order}
    LIMIT ${limit}`
  return rows.map(toMessage)
}

/** One exported message: the stored facts as JSON text, and the keys the caller turns into global ids. */
export type ExportRow = {
  seq: number
  senderId: number | null
  sender: { handle: string; displayName: string } | null
  mentionUserIds: number[]
  visibleTo: number[]
  /** A JSON object of the message's own fields, content null once recalled, timestamps in UTC. */
  fields: string
}

const utc = (column: Prisma.Sql) => Prisma.sql`to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`

/**
 * A conversation's messages after `afterSeq`, ascending, as stored (the operators' export). PostgreSQL
 * writes each message's JSON: the export passes text through instead of building objects per row.
 */
export async function listExportRows(
  conn: Conn,
  conversationId: number,
  afterSeq: number,
  limit: number,
): Promise<ExportRow[]> {
  const rows = await queryPooled<
    Omit<ExportRow, 'seq' | 'senderId' | 'mentionUserIds' | 'visibleTo'> & {
      seq: number | bigint
      senderId: number | bigint | null
      mentionUserIds: (number | bigint)[]
      visibleTo: (number | bigint)[]
    }
  >(
    conn,
    Prisma.sql`SELECT m.seq, m.sender_id AS "senderId", m.mention_user_ids AS "mentionUserIds", m.visible_to AS "visibleTo",
        CASE WHEN u.id IS NULL THEN NULL ELSE json_build_object('handle', u.handle, 'displayName', u.display_name) END AS sender,
        json_build_object('seq', m.seq, 'pts', m.pts, 'senderType', m.sender_type, 'kind', m.kind, 'status', CASE WHEN m.removed THEN 'REMOVED' ELSE m.status::text END,
          -- What a recall kept under a legal hold is for operators; otherwise a recalled message has none.
          'content', CASE WHEN m.status = 'RECALLED' AND NOT c.legal_hold THEN NULL ELSE m.content END, 'quotedSeq', m.quoted_seq,
          'mentionAll', m.mention_all, 'sentAt', ${utc(Prisma.sql`m.sent_at`)}, 'editedAt', ${utc(Prisma.sql`m.edited_at`)},
          'recalledAt', ${utc(Prisma.sql`m.recalled_at`)})::text AS fields
      FROM messages m JOIN conversations c ON c.id = m.conversation_id LEFT JOIN users u ON u.id = m.sender_id
      WHERE m.conversation_id = ${conversationId} AND m.seq > ${afterSeq} ORDER BY m.seq LIMIT ${limit}`,
  )
  return rows.map((r) => ({
    ...r,
    seq: Number(r.seq),
    senderId: r.senderId === null ? null : Number(r.senderId),
    mentionUserIds: r.mentionUserIds.map(Number),
    visibleTo: r.visibleTo.map(Number),
  }))
}
