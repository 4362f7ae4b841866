import { toMessage, type MessageRecord, type MessageRow } from './records.ts'
import { MESSAGE_COLUMNS, visibleTo, type Reader } from './fragments.ts'
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

/**
 * Through the pool (decisions 0155, 0262): the `changes` query's page and a resume replay's read, the
 * hot read of live delivery.
 */
export async function listChanges(
  conn: Conn,
  reader: Reader,
  conversationId: number,
  opts: ChangesRange,
): Promise<MessageRecord[]> {
  return (await queryPooled<MessageRow>(conn, changesSql(reader, conversationId, opts))).map(toMessage)
}
