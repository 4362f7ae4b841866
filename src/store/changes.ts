import pg from 'pg'
import { poolOf, statementName, type Db } from '../db/client.ts'
import { toMessage, type MessageRecord, type MessageRow } from './records.ts'
import { MESSAGE_COLUMNS, visibleTo, type Reader } from './messages.ts'
import { Prisma, type Conn } from './sql.ts'

type ChangesRange = { sincePts: number; limit: number; untilPts?: number }

/**
 * The change feed: every message whose latest state has pts > sincePts, ascending by pts, as the
 * reader may see it. A range scan of the unique (conversation_id, pts) index; each message appears
 * once, in its latest state, because a message's pts moves forward on every edit and recall.
 */
const changesSql = (reader: Reader, conversationId: number, opts: ChangesRange) => Prisma.sql`
    SELECT ${MESSAGE_COLUMNS} FROM messages m
    JOIN conversation_members cm ON cm.conversation_id = m.conversation_id AND cm.user_id = ${reader.userId} AND cm.left_at IS NULL
    WHERE m.conversation_id = ${conversationId} AND m.pts > ${opts.sincePts}
      ${opts.untilPts !== undefined ? Prisma.sql`AND m.pts <= ${opts.untilPts}` : Prisma.empty}
      AND ${visibleTo(reader)}
    ORDER BY m.pts
    LIMIT ${opts.limit}`

export async function listChanges(conn: Conn, reader: Reader, conversationId: number, opts: ChangesRange): Promise<MessageRecord[]> {
  return (await conn.$queryRaw<MessageRow[]>(changesSql(reader, conversationId, opts))).map(toMessage)
}

const INT8 = 20
const INT8_ARRAY = 1016
const int8Array = pg.types.getTypeParser(INT8_ARRAY as never)
// Most messages mention no one and are directed at no one: '{}' needs no parser.
const int8Numbers = (text: string): number[] => (text === '{}' ? [] : (int8Array(text) as string[]).map(Number))
/** bigint columns (ids, seq, pts) and arrays of them as numbers, the rest as pg parses them (timestamptz: Date, jsonb: parsed). */
const numberTypes = {
  getTypeParser: (oid: number, format?: 'text' | 'binary') =>
    oid === INT8 ? Number : oid === INT8_ARRAY ? int8Numbers : pg.types.getTypeParser(oid as never, format),
}

/**
 * listChanges for a resume replay, the hot read of live delivery: the same statement, its rows read
 * through the Prisma adapter's own pg pool and mapped once by toMessage, which costs a fraction of
 * Prisma's row mapping (decision 0155). Outside a transaction only.
 */
export async function readReplayPage(db: Db, reader: Reader, conversationId: number, opts: Required<ChangesRange>): Promise<MessageRecord[]> {
  const pool = poolOf(db)
  const sql = changesSql(reader, conversationId, opts)
  if (!pool) return listChanges(db, reader, conversationId, opts)
  const { rows } = await pool.query<MessageRow>({ text: sql.text, values: sql.values, name: statementName(sql.text), types: numberTypes })
  return rows.map(toMessage)
}
