import { Prisma } from './sql.ts'

/**
 * The search documents written beside messages: by a send's append, an edit and a recall, in the
 * same statement as the message (store/search.ts reads them).
 */

/** A search document: a tsvector's text form, '' when the message has nothing to search. */
export type SearchDocument = string

/**
 * For appendMessages: a CTE that writes the documents of the messages it appends (the ones with
 * one), stamped `sentAt` like the messages, in the same statement as the messages themselves.
 * `appended` names a relation of (conversation_id, seq, document text) rows; '' and NULL are none.
 */
export const indexAppended = (appended: Prisma.Sql, sentAt: Prisma.Sql): Prisma.Sql => Prisma.sql`, searched AS (
  INSERT INTO message_search (conversation_id, seq, sent_at, document)
  SELECT a.conversation_id, a.seq, ${sentAt}, a.document::tsvector FROM ${appended} a WHERE a.document <> '')`

/**
 * For an edit (a CTE beside the UPDATE, as `changed`): the edited message's document replaces the
 * old one, or goes when the new text has nothing to search. Null leaves the index alone.
 */
export function indexChanged(document: SearchDocument | null): Prisma.Sql {
  if (document === null) return Prisma.empty
  return document
    ? Prisma.sql`, searched AS (
        INSERT INTO message_search (conversation_id, seq, sent_at, document)
        SELECT c."conversationId", c.seq, c."sentAt", ${document}::tsvector FROM changed c
        ON CONFLICT (conversation_id, seq) DO UPDATE SET document = EXCLUDED.document)`
    : unindexChanged
}

/** For a recall (a CTE beside the UPDATE, as `changed`): a tombstone keeps no searchable text. */
export const unindexChanged = Prisma.sql`, unsearched AS (
  DELETE FROM message_search s USING changed c WHERE s.conversation_id = c."conversationId" AND s.seq = c.seq)`
