import type { Db } from '../db/client.ts'
import { toMessage, type MessageRecord, type MessageRow } from './records.ts'
import { MESSAGE_COLUMNS, visibleTo, type Reader } from './messages.ts'
import { queryPooled } from './pooled.ts'
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

/**
 * listChanges for a resume replay, the hot read of live delivery: the same statement, its rows read
 * through the Prisma adapter's own pg pool and mapped once by toMessage, which costs a fraction of
 * Prisma's row mapping (decision 0155). Outside a transaction only.
 */
export async function readReplayPage(db: Db, reader: Reader, conversationId: number, opts: Required<ChangesRange>): Promise<MessageRecord[]> {
  return (await queryPooled<MessageRow>(db, changesSql(reader, conversationId, opts))).map(toMessage)
}
