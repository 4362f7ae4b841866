import type { MessageKey } from '../domain/core/index.ts'
import { changeWithPts, oneMessage } from './lifecycle.ts'
import type { MessageRecord } from './records.ts'
import { indexChanged, type SearchDocument } from './searchDocuments.ts'
import { Prisma, type Conn } from './sql.ts'

/** A streamed message while it is written, as its message_streams row and message hold it. */
export type StoredStream = MessageKey & { senderId: number; sequence: number; text: string; touchedAt: Date }

/**
 * Writes a stream's text so far in place (no version, no pts) with the sequence it reached, unless
 * a later sequence is already stored (appends taken by two instances store in any order) or the
 * stream ended. One statement; false when nothing was written because the stream is over.
 */
export async function storeStreamText(conn: Conn, key: MessageKey, sequence: number, text: string): Promise<boolean> {
  const [row] = await conn.$queryRaw<{ open: boolean }[]>`
    WITH s AS (
      UPDATE message_streams SET sequence = ${sequence}, touched_at = clock_timestamp()
      WHERE conversation_id = ${key.conversationId} AND seq = ${key.seq} AND sequence < ${sequence} RETURNING 1),
    m AS (
      UPDATE messages m SET content = jsonb_set(m.content, '{text}', to_jsonb(${text}::text))
      WHERE ${oneMessage(key)} AND m.status = 'STREAMING' AND EXISTS (SELECT 1 FROM s))
    SELECT EXISTS (SELECT 1 FROM message_streams WHERE conversation_id = ${key.conversationId} AND seq = ${key.seq}) AS open`
  return row!.open
}

/** The stream of a message still being written, with its stored text; null once it ended. */
export async function findStream(conn: Conn, key: MessageKey, lock = false): Promise<StoredStream | null> {
  const rows = await conn.$queryRaw<
    { senderId: bigint; sequence: number; text: string | null; touchedAt: Date }[]
  >`SELECT s.sender_id AS "senderId", s.sequence, m.content->>'text' AS text, s.touched_at AS "touchedAt"
    FROM message_streams s JOIN messages m ON m.conversation_id = s.conversation_id AND m.seq = s.seq
    WHERE s.conversation_id = ${key.conversationId} AND s.seq = ${key.seq}
    ${lock ? Prisma.sql`FOR UPDATE OF s` : Prisma.empty}`
  const row = rows[0]
  return row
    ? { ...key, senderId: Number(row.senderId), sequence: row.sequence, text: row.text ?? '', touchedAt: row.touchedAt }
    : null
}

/** Streams whose stored state was last touched before `before`, oldest first (the idle sweeper's candidates). */
export async function findIdleStreams(conn: Conn, before: Date, limit: number): Promise<MessageKey[]> {
  const rows = await conn.$queryRaw<{ conversationId: bigint; seq: bigint }[]>`
    SELECT conversation_id AS "conversationId", seq FROM message_streams
    WHERE touched_at < ${before} ORDER BY touched_at LIMIT ${limit}`
  return rows.map((r) => ({ conversationId: Number(r.conversationId), seq: Number(r.seq) }))
}

/**
 * Ends a stream: its final text, status NORMAL, the conversation's next pts (STREAM_ENDED) and its
 * search document, and its message_streams row goes, in one statement. Null when it was not
 * streaming (ended already, or recalled).
 */
export function endStream(
  conn: Conn,
  key: MessageKey,
  change: { text: string; pts: number; searchDocument: SearchDocument | null },
): Promise<MessageRecord | null> {
  return changeWithPts(
    conn,
    key.conversationId,
    change.pts,
    Prisma.sql`UPDATE messages m SET content = jsonb_set(m.content, '{text}', to_jsonb(${change.text}::text)),
        status = 'NORMAL', pts = ${change.pts}
      WHERE ${oneMessage(key)} AND m.status = 'STREAMING'`,
    Prisma.sql`${indexChanged(change.searchDocument)}, ended AS (
      DELETE FROM message_streams s USING changed c WHERE s.conversation_id = c."conversationId" AND s.seq = c.seq)`,
  )
}
