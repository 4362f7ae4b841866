import { Prisma } from './sql.ts'
import { THREAD_STATE_CHANGE } from './sync.ts'

/**
 * Account sync's source of the viewer's thread states (docs/threads.md): following and the thread
 * read position, by the (user_id, sync_xid, conversation_id, root_seq) index. The state rides in
 * `action` as "<following 0|1>:<last_read_seq>", outside the sort key (one row per thread), read at
 * the difference's snapshot like every other source (threadStateOf reads it back).
 */
export const threadStateSource = (userId: number) => ({
  kind: THREAD_STATE_CHANGE,
  xid: Prisma.sql`t.sync_xid`,
  columns: [Prisma.sql`t.conversation_id`, Prisma.sql`t.root_seq`],
  indexed: 2,
  rows: (where: Prisma.Sql, n: number) =>
    Prisma.sql`(SELECT t.sync_xid AS x, ${Prisma.raw(String(THREAD_STATE_CHANGE))} AS kind, t.conversation_id AS "conversationId", t.root_seq AS seq,
      (t.following::int)::text || ':' || t.last_read_seq AS action, false AS "left"
      FROM thread_followers t WHERE t.user_id = ${userId} AND ${where}
      ORDER BY t.sync_xid, t.conversation_id, t.root_seq LIMIT ${n})`,
})

/** The thread state a change of threadStateSource carries. */
export function threadStateOf(action: string): { following: boolean; lastReadSeq: number } {
  const [following, lastReadSeq] = action.split(':')
  return { following: following === '1', lastReadSeq: Number(lastReadSeq) }
}
