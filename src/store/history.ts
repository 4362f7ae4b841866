import { accessFromTuple, accessTupleOf, type AccessTuple, type ConversationAccess } from './conversations.ts'
import { columnarMessages, messagesFromColumns, type ColumnarMessages } from './columnarMessages.ts'
import type { MessageRecord, UserRecord } from './records.ts'
import { preparedText, queryPrepared, type PreparedText } from './pooled.ts'
import { Prisma, limitLiteral, planIndependent, type Conn } from './sql.ts'
import { USER_COLUMNS, MESSAGE_COLUMNS, readerMembership, visibleTo, type Reader } from './fragments.ts'

export type SeqRange = { afterSeq: number | null; beforeSeq: number | null }

/**
 * `from: 'start'` reads ascending from the lower bound, `from: 'end'` descending from the upper bound;
 * `quoted`: whether the messages the page quotes are read with it (when nothing will show them, not).
 */
export type PageOptions = SeqRange & { from: 'start' | 'end'; limit: number; quoted: boolean }

/**
 * A page of history and what its fields read next, from one statement: the messages in the scan's
 * order, the messages they quote that the reader may see (`quotedSeqs` lists every seq looked up, so
 * an absent one is known to be hidden or missing; none when not read), the users who sent either, and `beyond`.
 */
export type HistoryPage = {
  messages: MessageRecord[]
  quoted: MessageRecord[]
  quotedSeqs: number[]
  users: UserRecord[]
  beyond: boolean
}

type UserTuple = [id: number, handle: string, displayName: string, kind: UserRecord['kind'], deactivated: boolean]

type PageJson = {
  messages: ColumnarMessages
  quoted?: ColumnarMessages
  users: UserTuple[]
  beyond: boolean
  access?: AccessTuple | null
}

const userFromTuple = (t: UserTuple): UserRecord => ({
  id: t[0],
  handle: t[1],
  displayName: t[2],
  kind: t[3],
  deactivated: t[4],
})

/**
 * The bounds are plan-independent (store/sql.ts), so PostgreSQL keeps one generic plan for the
 * statement (a keyset scan on the key, right at every depth) instead of planning it anew on each
 * call, which for this statement costs twice its execution.
 */
const seqRange = (r: SeqRange) => Prisma.sql`
  ${r.afterSeq !== null ? Prisma.sql`AND m.seq > ${planIndependent(r.afterSeq)}` : Prisma.empty}
  ${r.beforeSeq !== null ? Prisma.sql`AND m.seq < ${planIndependent(r.beforeSeq)}` : Prisma.empty}`

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
export async function readHistoryPage(
  conn: Conn,
  reader: Reader,
  conversationId: number,
  opts: PageOptions,
  beyond: SeqRange | null,
): Promise<HistoryPage> {
  return pageFromJson(conversationId, opts, await queryPage(conn, reader, conversationId, opts, beyond, false))
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
  const json = await queryPage(conn, reader, conversationId, opts, beyond, true)
  return { ...pageFromJson(conversationId, opts, json), access: json.access ? accessFromTuple(json.access) : null }
}

/** What a page's statement is sent with; its text depends only on which of them are null (and on the limit, a literal). */
type PageValues = [
  conversationId: number,
  userId: number,
  afterSeq: number | null,
  beforeSeq: number | null,
  beyondAfter: number | null,
  beyondBefore: number | null,
]

/**
 * The statement of a page of this shape, built once: its text, and for each of its parameters the
 * PageValues index it takes. It is built with stand-ins for the values (-1 for index 0, -2 for 1, …,
 * never sent), so the SQL is written once, with the fragments every read path shares.
 */
type PageStatement = PreparedText & { slots: number[] }
const statements = new Map<string, PageStatement>()

function pageStatement(opts: PageOptions, beyond: SeqRange | null, withAccess: boolean): PageStatement {
  const has = (v: number | null) => (v === null ? '0' : '1')
  const shape = `${opts.from} ${opts.limit} ${has(opts.afterSeq)}${has(opts.beforeSeq)} ${beyond ? has(beyond.afterSeq) + has(beyond.beforeSeq) : '-'} ${withAccess} ${opts.quoted}`
  let statement = statements.get(shape)
  if (statement) return statement
  const [conversationId, userId, afterSeq, beforeSeq, beyondAfter, beyondBefore] = [-1, -2, -3, -4, -5, -6]
  const stand = (v: number | null, standIn: number) => (v === null ? null : standIn)
  const reader = { userId }
  const pageRange = { afterSeq: stand(opts.afterSeq, afterSeq), beforeSeq: stand(opts.beforeSeq, beforeSeq) }
  // The quoted part (its CTE, its messages, its senders) costs its executor start-up even when nothing
  // is quoted, so it is left out when nothing will show it (decision 0260).
  const quoted = opts.quoted
    ? {
        cte: Prisma.sql`, quoted AS (SELECT ${MESSAGE_COLUMNS} ${visibleIn(reader, conversationId, Prisma.sql`AND m.seq IN (SELECT "quotedSeq" FROM page)`)})`,
        messages: Prisma.sql`'quoted', (SELECT ${columnarMessages} FROM quoted p),`,
        senders: Prisma.sql`|| (SELECT array_agg("senderId") FROM quoted)`,
      }
    : { cte: Prisma.empty, messages: Prisma.empty, senders: Prisma.empty }
  // The page's senders are collected in the same pass as its messages' JSON: read a second time (a
  // subquery of their own), the page would be materialized first, about a sixth of the statement's
  // database time (bench/bounds.md, the PostGraphile item). Unless the quoted part reads the page too.
  const sql = Prisma.sql`
    WITH page AS (
      SELECT ${MESSAGE_COLUMNS} ${visibleIn(reader, conversationId, seqRange(pageRange))}
      ORDER BY m.seq ${direction(opts)} LIMIT ${limitLiteral(opts.limit)}) ${quoted.cte}
    SELECT json_build_object(
      'messages', x.messages,
      ${quoted.messages}
      'users', (SELECT coalesce(json_agg(json_build_array(u.id, u.handle, u."displayName", u.kind, u.deactivated)), '[]') FROM (
        SELECT ${USER_COLUMNS} FROM users u WHERE u.id = ANY(x.senders ${quoted.senders})) u),
      'beyond', ${
        beyond
          ? Prisma.sql`EXISTS (SELECT 1 ${visibleIn(reader, conversationId, seqRange({ afterSeq: stand(beyond.afterSeq, beyondAfter), beforeSeq: stand(beyond.beforeSeq, beyondBefore) }))})`
          : Prisma.sql`false`
      }
      ${withAccess ? Prisma.sql`, 'access', ${accessTupleOf(conversationId, userId)}` : Prisma.empty}) AS page
    FROM (SELECT ${columnarMessages} AS messages, array_agg(DISTINCT p."senderId") AS senders FROM page p) x`
  const slots = sql.values.map((v) => {
    if (typeof v !== 'number' || v > -1 || v < -6) throw new Error('a history statement takes PageValues only')
    return -v - 1
  })
  statement = { ...preparedText(sql.text), slots }
  statements.set(shape, statement)
  return statement
}

async function queryPage(
  conn: Conn,
  reader: Reader,
  conversationId: number,
  opts: PageOptions,
  beyond: SeqRange | null,
  withAccess: boolean,
): Promise<PageJson> {
  const statement = pageStatement(opts, beyond, withAccess)
  const values: PageValues = [
    conversationId,
    reader.userId,
    opts.afterSeq,
    opts.beforeSeq,
    beyond?.afterSeq ?? null,
    beyond?.beforeSeq ?? null,
  ]
  const rows = await queryPrepared<{ page: PageJson }>(
    conn,
    statement,
    statement.slots.map((i) => values[i]),
  )
  return rows[0]!.page
}

function pageFromJson(conversationId: number, opts: PageOptions, page: PageJson): HistoryPage {
  // In the scan's order already (columnarMessages); sorted here so the page's order never rests on an
  // aggregate's input order, which PostgreSQL does not promise (a pass over sorted input, O(n)).
  const messages = messagesFromColumns(page.messages, () => conversationId).sort(
    opts.from === 'start' ? (a, b) => a.seq - b.seq : (a, b) => b.seq - a.seq,
  )
  const quoted = page.quoted ? messagesFromColumns(page.quoted, () => conversationId) : []
  // The seqs the quoted part looked up: every quotedSeq of the page, none when it was not read.
  const quotedSeqs = page.quoted
    ? [...new Set(messages.flatMap((m) => (m.quotedSeq === null ? [] : [m.quotedSeq])))]
    : []
  return { messages, quoted, quotedSeqs, users: page.users.map(userFromTuple), beyond: page.beyond }
}
