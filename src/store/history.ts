import { accessFromJson, accessJson, type ConversationAccess } from './conversations.ts'
import { MESSAGE_COLUMNS, messageFromJson, readerMembership, visibleTo, type Reader } from './messages.ts'
import { toUser, type MessageRecord, type MessageRow, type UserRecord } from './records.ts'
import { queryPooled } from './pooled.ts'
import { Prisma, type Conn } from './sql.ts'
import { USER_COLUMNS } from './users.ts'

export type SeqRange = { afterSeq: number | null; beforeSeq: number | null }

/** `from: 'start'` reads ascending from the lower bound, `from: 'end'` descending from the upper bound. */
export type PageOptions = SeqRange & { from: 'start' | 'end'; limit: number }

/**
 * A page of history and what its fields read next, from one statement: the messages in the scan's
 * order, the messages they quote that the reader may see (`quotedSeqs` lists every seq looked up, so
 * an absent one is known to be hidden or missing), the users who sent either, and `beyond`.
 */
export type HistoryPage = { messages: MessageRecord[]; quoted: MessageRecord[]; quotedSeqs: number[]; users: UserRecord[]; beyond: boolean }

type PageJson = {
  messages: MessageRow[]
  quoted: MessageRow[]
  quotedSeqs: number[]
  users: Parameters<typeof toUser>[0][]
  beyond: boolean
  access?: Parameters<typeof accessFromJson>[0] | null
}

/**
 * The bounds are InitPlans, (SELECT $n), so that no plan depends on their values: PostgreSQL then keeps
 * one generic plan for the statement (a keyset scan on the key, right at every depth) instead of
 * planning it anew on each call, which for this statement costs twice its execution.
 */
const seqRange = (r: SeqRange) => Prisma.sql`
  ${r.afterSeq !== null ? Prisma.sql`AND m.seq > (SELECT ${r.afterSeq}::bigint)` : Prisma.empty}
  ${r.beforeSeq !== null ? Prisma.sql`AND m.seq < (SELECT ${r.beforeSeq}::bigint)` : Prisma.empty}`

/** LIMIT as a literal: a generic plan that knows it (at most 101 texts) costs like the custom one, so PostgreSQL keeps it. */
const limitLiteral = (limit: number) => {
  if (!Number.isSafeInteger(limit) || limit < 1) throw new Error(`page limit ${limit}`)
  return Prisma.raw(String(limit))
}

const direction = (opts: PageOptions) => (opts.from === 'start' ? Prisma.sql`ASC` : Prisma.sql`DESC`)

/** The messages of `range` the reader may see (visibleTo: the rule every read path shares). */
const visibleIn = (reader: Reader, conversationId: number, range: Prisma.Sql) => Prisma.sql`
  FROM messages m ${readerMembership(reader)}
  WHERE m.conversation_id = ${conversationId} ${range} AND ${visibleTo(reader)}`

/**
 * A page of history the reader may see, as an index range scan on the (conversation_id, seq) key,
 * with `beyond`: whether the reader can see any message in that range (the other side of the
 * cursor: exact hasNextPage / hasPreviousPage), one EXISTS on the same key; false when not asked.
 * One round trip and one JSON value, read through the pool (queryPooled): pg parses one column.
 */
export async function readHistoryPage(conn: Conn, reader: Reader, conversationId: number, opts: PageOptions, beyond: SeqRange | null): Promise<HistoryPage> {
  return pageFromJson(await queryPage(conn, reader, conversationId, opts, beyond, Prisma.empty))
}

/**
 * readHistoryPage with the conversation and the reader's membership (findConversationsForUser's
 * row; null when the conversation does not exist) in the same statement: a page whose membership
 * check is one round trip with it. Without a membership the page is empty (readerMembership).
 */
export async function readConversationPage(
  conn: Conn,
  reader: Reader,
  conversationId: number,
  opts: PageOptions,
  beyond: SeqRange | null,
): Promise<HistoryPage & { access: ConversationAccess | null }> {
  const json = await queryPage(conn, reader, conversationId, opts, beyond, Prisma.sql`, 'access', ${accessJson(conversationId, reader.userId)}`)
  return { ...pageFromJson(json), access: json.access ? accessFromJson(json.access) : null }
}

async function queryPage(conn: Conn, reader: Reader, conversationId: number, opts: PageOptions, beyond: SeqRange | null, extra: Prisma.Sql): Promise<PageJson> {
  const rows = await queryPooled<{ page: PageJson }>(conn, Prisma.sql`
    WITH page AS (
      SELECT ${MESSAGE_COLUMNS} ${visibleIn(reader, conversationId, seqRange(opts))}
      ORDER BY m.seq ${direction(opts)} LIMIT ${limitLiteral(opts.limit)}),
    quoted AS (
      SELECT ${MESSAGE_COLUMNS} ${visibleIn(reader, conversationId, Prisma.sql`AND m.seq IN (SELECT "quotedSeq" FROM page)`)})
    SELECT json_build_object(
      'messages', (SELECT coalesce(json_agg(p ORDER BY p.seq ${direction(opts)}), '[]') FROM page p),
      'quoted', (SELECT coalesce(json_agg(q), '[]') FROM quoted q),
      'quotedSeqs', (SELECT coalesce(json_agg(DISTINCT p."quotedSeq"), '[]') FROM page p WHERE p."quotedSeq" IS NOT NULL),
      'users', (SELECT coalesce(json_agg(u), '[]') FROM (
        SELECT ${USER_COLUMNS} FROM users u WHERE u.id IN (SELECT "senderId" FROM page UNION SELECT "senderId" FROM quoted)) u),
      'beyond', ${beyond ? Prisma.sql`EXISTS (SELECT 1 ${visibleIn(reader, conversationId, seqRange(beyond))})` : Prisma.sql`false`}
      ${extra}) AS page`)
  return rows[0]!.page
}

const pageFromJson = (page: PageJson): HistoryPage => ({
  messages: page.messages.map(messageFromJson),
  quoted: page.quoted.map(messageFromJson),
  quotedSeqs: page.quotedSeqs,
  users: page.users.map(toUser),
  beyond: page.beyond,
})
