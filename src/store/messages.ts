import type { MessageKind, SenderType } from '../generated/prisma/enums.ts'
import { columnarMessages, messagesFromColumns, type ColumnarMessages } from './columnarMessages.ts'
import { toMessage, type ForwardOriginRecord, type MessageRecord, type MessageRow } from './records.ts'
import { queryPooled } from './pooled.ts'
import { indexAppended, type SearchDocument } from './searchDocuments.ts'
import {
  membershipsAmong,
  MESSAGE_COLUMNS,
  readerMembership,
  visibleTo,
  visibleToUser,
  type Reader,
} from './fragments.ts'
import { Prisma, arrayLiteral, bigintArray, plannedPerCall, violatedUniqueConstraint, type Conn } from './sql.ts'

export type MessageDraft = {
  senderType: SenderType
  senderId: number | null
  kind: MessageKind
  clientMessageId: string | null
  content: unknown
  quotedSeq: number | null
  mentionUserIds: number[]
  mentionAll: boolean
  visibleTo: number[]
  /** A copy's origin (content.copy); absent or null for any other message. */
  forwardedFrom?: ForwardOriginRecord | null
  /** Written to the search index with the message (store/search.ts); absent or '' for none. */
  searchDocument?: SearchDocument
  /** STREAMING: a streamed reply's start, which also opens its message_streams row; absent: NORMAL. */
  status?: 'NORMAL' | 'STREAMING'
}

/**
 * What appendMessages throws when a row's (conversation, sender, clientMessageId) is already stored
 * (the messages_idempotency_key constraint). The transaction is lost with it; the caller rolls back
 * and reads the original (findByClientMessageIds).
 */
export class DuplicateIdempotencyKey extends Error {
  constructor() {
    super('a message with this clientMessageId is already stored')
  }
}

/** Messages to append to one conversation, whose row the caller holds locked, after its counters `last`. */
export type Append = {
  conversationId: number
  last: { lastSeq: number; lastPts: number }
  drafts: readonly MessageDraft[]
}

/** jsonb's order of object keys: shorter first, then by their bytes. */
const jsonbKeyOrder = (a: string, b: string) =>
  Buffer.byteLength(a) - Buffer.byteLength(b) || Buffer.compare(Buffer.from(a), Buffer.from(b))
const sortKeys = (v: unknown): unknown =>
  Array.isArray(v)
    ? v.map(sortKeys)
    : v && typeof v === 'object'
      ? Object.fromEntries(
          Object.keys(v)
            .sort(jsonbKeyOrder)
            .map((k) => [k, sortKeys((v as Record<string, unknown>)[k])]),
        )
      : v
/** A value as a jsonb column gives it back (what JSON keeps, keys in jsonb's order), so a sent message reads as any later read of it. */
const asJsonb = (v: unknown) => sortKeys(JSON.parse(JSON.stringify(v)))

/**
 * Appends messages to conversations whose rows the caller holds locked (lockConversations), taking
 * seq and pts after each one's `last`. One statement whatever the batch, with one SQL text (the rows
 * arrive as array literals): the rows, each conversation's counters and activity time, each user
 * sender's read position (sending reads up to your own message), and the search documents. It returns
 * only the time it stamped (as stored: milliseconds); the messages are built here from the drafts, in
 * the order of `appends`.
 */
export async function appendMessagesTo(conn: Conn, appends: readonly Append[]): Promise<MessageRecord[]> {
  const rows = appends.flatMap((a) =>
    a.drafts.map((d, i) => ({
      ...d,
      conversationId: a.conversationId,
      seq: a.last.lastSeq + i + 1,
      pts: a.last.lastPts + i + 1,
    })),
  )
  const column = (pick: (r: (typeof rows)[number]) => string | number | boolean | null) => arrayLiteral(rows.map(pick))
  // Runs after lockConversations, so it is planned per call (see there).
  const [stamped] = await conn.$queryRaw<{ sentAt: Date }[]>`
    WITH clock AS (SELECT clock_timestamp()::timestamptz(3) AS at),
    appended AS (
      SELECT * FROM unnest(${column((r) => r.conversationId)}::bigint[], ${column((r) => r.seq)}::bigint[], ${column((r) => r.pts)}::bigint[],
        ${column((r) => r.senderType)}::"SenderType"[], ${column((r) => r.senderId)}::bigint[], ${column((r) => r.kind)}::"MessageKind"[],
        ${column((r) => r.clientMessageId)}::text[], ${column((r) => JSON.stringify(r.content))}::text[], ${column((r) => r.quotedSeq)}::bigint[],
        ${column((r) => arrayLiteral(r.mentionUserIds))}::text[], ${column((r) => r.mentionAll)}::boolean[], ${column((r) => arrayLiteral(r.visibleTo))}::text[],
        ${column((r) => (r.forwardedFrom ? JSON.stringify(r.forwardedFrom) : null))}::text[], ${column((r) => r.searchDocument ?? '')}::text[],
        ${column((r) => r.status ?? 'NORMAL')}::"MessageStatus"[])
        AS a(conversation_id, seq, pts, sender_type, sender_id, kind, client_message_id, content, quoted_seq, mention_user_ids, mention_all,
          visible_to, forwarded_from, document, status)),
    conv AS (
      UPDATE conversations c SET last_seq = n.last_seq, last_pts = n.last_pts, last_activity_at = (SELECT at FROM clock)
      FROM (SELECT conversation_id, max(seq) AS last_seq, max(pts) AS last_pts FROM appended GROUP BY conversation_id) n
      WHERE c.id = n.conversation_id),
    reads AS (
      UPDATE conversation_members cm SET last_read_seq = GREATEST(cm.last_read_seq, r.seq), last_read_at = (SELECT at FROM clock)
      FROM (SELECT conversation_id, sender_id AS user_id, max(seq) AS seq FROM appended
        WHERE sender_type <> 'SYSTEM' AND sender_id IS NOT NULL GROUP BY 1, 2) r
      WHERE cm.conversation_id = r.conversation_id AND cm.user_id = r.user_id)
    ${indexAppended(Prisma.sql`appended`, Prisma.sql`(SELECT at FROM clock)`)},
    inserted AS (
      INSERT INTO messages (conversation_id, seq, pts, sender_type, sender_id, kind, client_message_id, content,
        quoted_seq, mention_user_ids, mention_all, visible_to, sent_at, forwarded_from, status)
      SELECT conversation_id, seq, pts, sender_type, sender_id, kind, client_message_id, content::jsonb, quoted_seq,
        mention_user_ids::bigint[], mention_all, visible_to::bigint[], (SELECT at FROM clock), forwarded_from::jsonb, status
      FROM appended RETURNING conversation_id, seq),
    streams AS (
      INSERT INTO message_streams (conversation_id, seq, sender_id, touched_at)
      SELECT a.conversation_id, a.seq, a.sender_id, (SELECT at FROM clock)
      FROM appended a JOIN inserted i USING (conversation_id, seq) WHERE a.status = 'STREAMING')
    SELECT at AS "sentAt" FROM clock`.catch((error: unknown) => {
    throw violatedUniqueConstraint(error) === 'messages_idempotency_key' ? new DuplicateIdempotencyKey() : error
  })
  const sentAt = stamped!.sentAt
  return rows.map((r) => ({
    conversationId: r.conversationId,
    seq: r.seq,
    pts: r.pts,
    senderType: r.senderType,
    senderId: r.senderId,
    kind: r.kind,
    clientMessageId: r.clientMessageId,
    content: asJsonb(r.content),
    quotedSeq: r.quotedSeq,
    mentionUserIds: r.mentionUserIds,
    mentionAll: r.mentionAll,
    visibleTo: r.visibleTo,
    status: r.status ?? 'NORMAL',
    sentAt,
    editedAt: null,
    recalledAt: null,
    recalledById: null,
    reactionsPts: null,
    forwardedFrom: r.forwardedFrom ? (asJsonb(r.forwardedFrom) as ForwardOriginRecord) : null,
  }))
}

/** appendMessagesTo for one conversation. */
export const appendMessages = (
  conn: Conn,
  conversationId: number,
  last: Append['last'],
  drafts: readonly MessageDraft[],
) => appendMessagesTo(conn, [{ conversationId, last, drafts }])

const jsonDate = (v: Date | string | null) => (v === null ? null : new Date(v))
/**
 * A message row read as JSON (inside a larger statement): its ids arrive as numbers and its
 * timestamps as strings, so the freshly parsed row becomes the record in place, without a copy per message.
 */
export function messageFromJson(r: MessageRow): MessageRecord {
  const m = r as MessageRecord
  m.sentAt = jsonDate(r.sentAt)!
  m.editedAt = jsonDate(r.editedAt)
  m.recalledAt = jsonDate(r.recalledAt)
  return m
}

export type IdempotencyKey = { senderType: SenderType; senderId: number; clientMessageId: string }

/** Messages already stored under any of `keys` in one conversation (the idempotency lookup). */
export async function findByClientMessageIds(
  conn: Conn,
  conversationId: number,
  keys: readonly IdempotencyKey[],
): Promise<MessageRecord[]> {
  const rows = await conn.$queryRaw<MessageRow[]>`${plannedPerCall}
    SELECT ${MESSAGE_COLUMNS}
    FROM unnest(${arrayLiteral(keys.map((k) => k.senderType))}::"SenderType"[], ${bigintArray(keys.map((k) => k.senderId))}, ${arrayLiteral(keys.map((k) => k.clientMessageId))}::varchar[])
      AS k(sender_type, sender_id, client_message_id)
    JOIN messages m ON m.conversation_id = ${conversationId} AND m.sender_type = k.sender_type
      AND m.sender_id = k.sender_id AND m.client_message_id = k.client_message_id`
  return rows.map(toMessage)
}

/** The SYSTEM message a host posted under `clientMessageId` (postSystemMessage's idempotency), if any. */
export async function findSystemByClientMessageId(
  conn: Conn,
  conversationId: number,
  clientMessageId: string,
): Promise<MessageRecord | null> {
  const rows = await conn.$queryRaw<MessageRow[]>`
    SELECT ${MESSAGE_COLUMNS} FROM messages m
    WHERE m.conversation_id = ${conversationId} AND m.sender_type = 'SYSTEM' AND m.client_message_id = ${clientMessageId}`
  return rows[0] ? toMessage(rows[0]) : null
}

/** Messages by key that the reader may see; invisible or missing keys are simply absent. */
export async function findVisibleMessages(
  conn: Conn,
  reader: Reader,
  keys: readonly { conversationId: number; seq: number }[],
): Promise<MessageRecord[]> {
  const rows = await queryPooled<MessageRow>(
    conn,
    Prisma.sql`
    SELECT ${MESSAGE_COLUMNS}
    FROM unnest(${bigintArray(keys.map((k) => k.conversationId))}, ${bigintArray(keys.map((k) => k.seq))}) AS k(conversation_id, seq)
    JOIN messages m ON m.conversation_id = k.conversation_id AND m.seq = k.seq
    ${readerMembership(reader)}
    WHERE ${visibleTo(reader)}`,
  )
  return rows.map(toMessage)
}

/**
 * The newest message the reader may see in each conversation (one statement for a whole inbox page),
 * as one JSON value of columns (columnarMessages, the conversation ids aggregated beside them; decision 0250):
 * PostgreSQL writes and pg decodes one field instead of 19 a conversation. In no order (each record
 * carries its conversation).
 */
export async function findLastVisibleMessages(
  conn: Conn,
  reader: Reader,
  conversationIds: readonly number[],
): Promise<MessageRecord[]> {
  const rows = await queryPooled<{ last: [number[] | null, ColumnarMessages] }>(
    conn,
    Prisma.sql`
    SELECT json_build_array(json_agg(p."conversationId"), ${columnarMessages}) AS last
    FROM ${membershipsAmong(reader.userId, conversationIds)}
    CROSS JOIN LATERAL (
      SELECT ${MESSAGE_COLUMNS} FROM messages m
      WHERE m.conversation_id = cm.conversation_id AND ${visibleToUser(Prisma.sql`cm.user_id`)}
      ORDER BY m.seq DESC LIMIT 1) p`,
  )
  const [ids, columns] = rows[0]!.last
  return messagesFromColumns(columns, (i) => ids![i]!)
}
