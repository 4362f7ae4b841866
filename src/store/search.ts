import { toMessage, type MessageKind, type MessageRecord, type MessageRow } from './records.ts'
import { queryPooled } from './pooled.ts'
import { Prisma, limitLiteral, type Conn } from './sql.ts'
import { MESSAGE_COLUMNS, membershipOf, notRecalled, visibleToUser, type Reader } from './fragments.ts'

/**
 * Every SQL statement of search: the documents written alongside sends, edits and recalls, and the
 * queries over them. A deployment that outgrows PostgreSQL search swaps this module for one that
 * feeds and asks OpenSearch (docs/decisions/0070-search-documents.md).
 *
 * Documents and queries arrive as the text forms of a tsvector and a tsquery, built by
 * src/domain/search/text.ts; PostgreSQL's own parsers and dictionaries are never used.
 */

/** Where a page of results starts: the last result of the previous page (newest first). */
type SearchCursor = { sentAt: Date; conversationId: number; seq: number }

/**
 * How a search matches documents: one tsquery over the documents' index, or one tsquery per
 * conversation over the per-conversation words index (message_search_words; toTsquery with a
 * conversation id), OR-ed into one.
 */
export type TextMatch = { documents: string } | { conversationWords: string[] }

export type MessageSearch = {
  match: TextMatch
  conversationId: number | null
  senderId: number | null
  kinds: MessageKind[] | null
  sentAfter: Date | null
  sentBefore: Date | null
  after: SearchCursor | null
  limit: number
}

/** A filter condition, or false when the filter is not set. */
type Condition = Prisma.Sql | false
const and = (conditions: Condition[]) => {
  const set = conditions.filter((c): c is Prisma.Sql => c !== false)
  return set.length ? Prisma.sql`AND ${Prisma.join(set, ' AND ')}` : Prisma.empty
}

/**
 * The documents matching `match` (a condition on `s`) as CTE `matched` (conversation_id, seq,
 * sent_at), computed once from a GIN index: MATERIALIZED, so the planner cannot push a membership or
 * key condition into it and rerun the index scan per conversation, and the results sort on the
 * document's own sent_at, which has no index, so no plan walks all messages by time waiting for
 * matches. Cost grows with the number of documents that match, not with the number of messages: in
 * all conversations from the documents' index, in the asked ones only from the per-conversation words'.
 */
const matchedCte = (match: Prisma.Sql, conditions: Condition[] = []) => Prisma.sql`
  matched AS MATERIALIZED (
    SELECT s.conversation_id, s.seq, s.sent_at FROM message_search s WHERE ${match} ${and(conditions)})`

/** For the operators' view of messages `m`: the text match as a CTE to put first and a join, which names the match `s`. */
export const adminTextMatch = (tsquery: string) => ({
  with: Prisma.sql`WITH ${matchedCte(Prisma.sql`s.document @@ ${tsquery}::tsquery`)}`,
  join: Prisma.sql`JOIN matched s ON s.conversation_id = m.conversation_id AND s.seq = m.seq`,
})

/**
 * The statement of searchVisibleMessages (the benchmark EXPLAINs it). Every value reaches it through
 * the one-row CTE `p`, read as `(SELECT x FROM p)`, and the page size as a literal, so no plan is
 * specialized on the caller's query, reader or filters: a plan made with the values costs what the
 * generic plan costs plus its planning, and PostgreSQL keeps the generic plan after five calls,
 * whoever makes them (decision 0220). The set filters shape the text (a statement each).
 */
export function visibleMatchesSql(reader: Reader, q: MessageSearch): Prisma.Sql {
  const values: [string, Prisma.Sql][] = [['reader', Prisma.sql`${reader.userId}::bigint`]]
  const param = (name: string, value: Prisma.Sql) => {
    values.push([name, value])
    return Prisma.sql`(SELECT ${Prisma.raw(name)} FROM p)`
  }
  const match =
    'documents' in q.match
      ? Prisma.sql`s.document @@ ${param('query', Prisma.sql`${q.match.documents}::tsquery`)}`
      : Prisma.sql`message_search_words(s.conversation_id, s.document) @@ ${param('query', Prisma.sql`${q.match.conversationWords.map((w) => `(${w})`).join(' | ')}::tsquery`)}`
  const inDocuments = [
    q.conversationId !== null &&
      Prisma.sql`s.conversation_id = ${param('conversation', Prisma.sql`${q.conversationId}::bigint`)}`,
    q.sentAfter !== null && Prisma.sql`s.sent_at >= ${param('sent_after', Prisma.sql`${q.sentAfter}::timestamptz`)}`,
    q.sentBefore !== null && Prisma.sql`s.sent_at < ${param('sent_before', Prisma.sql`${q.sentBefore}::timestamptz`)}`,
    q.after !== null &&
      Prisma.sql`(s.sent_at, s.conversation_id, s.seq) < (${param('after_at', Prisma.sql`${q.after.sentAt}::timestamptz`)}, ${param('after_conversation', Prisma.sql`${q.after.conversationId}::bigint`)}, ${param('after_seq', Prisma.sql`${q.after.seq}::bigint`)})`,
  ]
  const onMessages = [
    q.senderId !== null && Prisma.sql`m.sender_id = ${param('sender', Prisma.sql`${q.senderId}::bigint`)}`,
    // Cast again: ANY over a bare subquery would compare with each of its rows, here one array.
    q.kinds !== null &&
      Prisma.sql`m.kind = ANY(${param('kinds', Prisma.sql`${q.kinds}::"MessageKind"[]`)}::"MessageKind"[])`,
  ]
  const readerId = Prisma.sql`(SELECT reader FROM p)`
  const matched = matchedCte(match, inDocuments)
  // The matches in the reader's conversations, sorted before any message is read: the sorted
  // subquery keeps its order through the nested loop below, so the LIMIT stops it once a page of
  // visible messages is full (about limit message lookups, not one per match in the reader's
  // conversations). It is named cm because it carries the membership row's visible_from_seq, which
  // visibleTo reads; the membership join is membershipOf's, with the matches as its m.
  const ranked = Prisma.sql`(
    SELECT m.conversation_id, m.seq, m.sent_at, cm.visible_from_seq FROM matched m ${membershipOf(readerId)}
    ORDER BY m.sent_at DESC, m.conversation_id DESC, m.seq DESC) cm`
  return Prisma.sql`
  WITH p AS MATERIALIZED (SELECT ${Prisma.join(values.map(([name, value]) => Prisma.sql`${value} AS ${Prisma.raw(name)}`))}),
  ${matched}
    SELECT ${MESSAGE_COLUMNS}
    FROM ${ranked}
    JOIN messages m ON m.conversation_id = cm.conversation_id AND m.seq = cm.seq
    WHERE ${visibleToUser(readerId)} AND ${notRecalled} ${and(onMessages)}
    ORDER BY cm.sent_at DESC, cm.conversation_id DESC, cm.seq DESC
    LIMIT ${limitLiteral(q.limit)}`
}

/**
 * The reader's messages whose document matches, newest first, under the shared visibility rule
 * (visibleTo) and recall rule (notRecalled; a recall also deletes the document): the match comes
 * from the index, membership and visibility join onto the matches.
 */
export async function searchVisibleMessages(conn: Conn, reader: Reader, q: MessageSearch): Promise<MessageRecord[]> {
  const rows = await queryPooled<MessageRow>(conn, visibleMatchesSql(reader, q))
  return rows.map(toMessage)
}

/**
 * The conversations a word search may ask the per-conversation index about: the reader's current
 * ones, at most `limit` (the caller falls back to the plain index past it). Membership is checked
 * again by the search statement itself, so one joined or left in between changes nothing it returns.
 */
export async function listSearchConversations(conn: Conn, reader: Reader, limit: number): Promise<number[]> {
  const rows = await queryPooled<{ id: number | bigint }>(
    conn,
    Prisma.sql`
    SELECT conversation_id AS id FROM conversation_members WHERE user_id = ${reader.userId} AND left_at IS NULL LIMIT ${limit}`,
  )
  return rows.map((r) => Number(r.id))
}
