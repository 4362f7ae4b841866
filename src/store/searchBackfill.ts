import type { MessageKey } from '../domain/core/index.ts'
import { toUser, type MessageKind, type UserRecord } from './records.ts'
import { Prisma, bigintArray, type Conn } from './sql.ts'
import { USER_COLUMNS, notRecalled } from './fragments.ts'
import type { SearchDocument } from './searchDocuments.ts'

/** What `npm run search:backfill` reads and writes: messages and users without a search document yet. */

/** A message that may need a document (npm run search:backfill): searchable kind, not recalled, none yet. */
export type UnindexedMessage = MessageKey & { sentAt: Date; kind: MessageKind; content: unknown }

const unindexed = (kinds: readonly MessageKind[]) => Prisma.sql`
  m.kind = ANY(${kinds}::"MessageKind"[]) AND ${notRecalled}
  AND NOT EXISTS (SELECT 1 FROM message_search s WHERE s.conversation_id = m.conversation_id AND s.seq = m.seq)`

/** The next conversations, by id, that hold messages without a document. */
export async function findConversationsToIndex(
  conn: Conn,
  kinds: readonly MessageKind[],
  afterId: number,
  limit: number,
): Promise<number[]> {
  const rows = await conn.$queryRaw<{ id: bigint }[]>`
    SELECT DISTINCT m.conversation_id AS id FROM messages m
    WHERE m.conversation_id > ${afterId} AND ${unindexed(kinds)}
    ORDER BY m.conversation_id LIMIT ${limit}`
  return rows.map((r) => Number(r.id))
}

/** Messages of one conversation without a document, by seq; run it under the conversation lock. */
export async function findUnindexedMessages(
  conn: Conn,
  conversationId: number,
  kinds: readonly MessageKind[],
  afterSeq: number,
  limit: number,
): Promise<UnindexedMessage[]> {
  const rows = await conn.$queryRaw<
    { conversationId: bigint; seq: bigint; sentAt: Date; kind: MessageKind; content: unknown }[]
  >`
    SELECT m.conversation_id AS "conversationId", m.seq, m.sent_at AS "sentAt", m.kind, m.content FROM messages m
    WHERE m.conversation_id = ${conversationId} AND m.seq > ${afterSeq} AND ${unindexed(kinds)}
    ORDER BY m.seq LIMIT ${limit}`
  return rows.map((r) => ({
    conversationId: Number(r.conversationId),
    seq: Number(r.seq),
    sentAt: r.sentAt,
    kind: r.kind,
    content: r.content,
  }))
}

/** Writes documents in one statement; a message indexed meanwhile (by a send or edit) keeps its own. */
export async function insertDocuments(
  conn: Conn,
  rows: readonly (MessageKey & { sentAt: Date; document: SearchDocument })[],
): Promise<void> {
  if (!rows.length) return
  await conn.$executeRaw`
    INSERT INTO message_search (conversation_id, seq, sent_at, document)
    SELECT * FROM unnest(${bigintArray(rows.map((r) => r.conversationId))}, ${bigintArray(rows.map((r) => r.seq))},
      ${rows.map((r) => r.sentAt)}::timestamptz[], ${rows.map((r) => r.document)}::tsvector[])
    ON CONFLICT (conversation_id, seq) DO NOTHING`
}

/** Users whose document is empty (created before search, or by hand), by id. */
export async function findUnindexedUsers(conn: Conn, afterId: number, limit: number): Promise<UserRecord[]> {
  const rows = await conn.$queryRaw<Parameters<typeof toUser>[0][]>`
    SELECT ${USER_COLUMNS} FROM users u WHERE u.id > ${afterId} AND u.search_document = ''::tsvector ORDER BY u.id LIMIT ${limit}`
  return rows.map(toUser)
}

/** Sets users' documents, unless handle or display name changed since they were read (the change wrote its own). */
export async function updateUserDocuments(
  conn: Conn,
  rows: readonly (UserRecord & { document: SearchDocument })[],
): Promise<void> {
  if (!rows.length) return
  await conn.$executeRaw`
    UPDATE users u SET search_document = d.document
    FROM unnest(${bigintArray(rows.map((r) => r.id))}, ${rows.map((r) => r.handle)}::varchar[], ${rows.map((r) => r.displayName)}::varchar[],
      ${rows.map((r) => r.document)}::tsvector[]) AS d(id, handle, display_name, document)
    WHERE u.id = d.id AND u.handle = d.handle AND u.display_name = d.display_name`
}
