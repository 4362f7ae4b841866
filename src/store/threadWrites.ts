import { Prisma } from './sql.ts'

/**
 * The CTEs the statement that appends messages (appendMessagesTo) runs for the replies among
 * `appended` (columns conversation_id, seq, sender_type, sender_id, mention_user_ids as text,
 * thread_root_seq): each thread's row (reply count, last reply), and the thread rows of the users a
 * reply makes followers (docs/threads.md): its sender, who has read up to the reply, the users it
 * mentions and the root's sender. Nothing per follower or member.
 */
export const threadWrites = (appended: Prisma.Sql, at: Prisma.Sql) => Prisma.sql`
  threads AS (
    INSERT INTO message_threads (conversation_id, root_seq, reply_count, last_reply_seq, last_reply_at)
    SELECT conversation_id, thread_root_seq, count(*), max(seq), ${at} FROM ${appended}
    WHERE thread_root_seq IS NOT NULL GROUP BY 1, 2
    ON CONFLICT (conversation_id, root_seq) DO UPDATE SET reply_count = message_threads.reply_count + EXCLUDED.reply_count,
      last_reply_seq = EXCLUDED.last_reply_seq, last_reply_at = EXCLUDED.last_reply_at),
  followed AS (
    -- last_read_seq above 0 marks a replier: replying follows again a thread one had left, while a
    -- mention or the root's own sender keeps an explicit followThread(false).
    INSERT INTO thread_followers (conversation_id, root_seq, user_id, following, last_read_seq, updated_at)
    SELECT conversation_id, root_seq, user_id, true, max(read_seq), ${at} FROM (
      SELECT a.conversation_id, a.thread_root_seq AS root_seq, a.sender_id AS user_id, a.seq AS read_seq FROM ${appended} a
      WHERE a.thread_root_seq IS NOT NULL AND a.sender_type <> 'SYSTEM' AND a.sender_id IS NOT NULL
      UNION ALL
      SELECT a.conversation_id, a.thread_root_seq, unnest(a.mention_user_ids::bigint[]), 0 FROM ${appended} a
      WHERE a.thread_root_seq IS NOT NULL
      UNION ALL
      SELECT a.conversation_id, a.thread_root_seq, r.sender_id, 0 FROM ${appended} a
      JOIN messages r ON r.conversation_id = a.conversation_id AND r.seq = a.thread_root_seq
      WHERE a.thread_root_seq IS NOT NULL AND r.sender_type <> 'SYSTEM' AND r.sender_id IS NOT NULL) f
    GROUP BY 1, 2, 3
    ON CONFLICT (conversation_id, root_seq, user_id) DO UPDATE
      SET following = thread_followers.following OR EXCLUDED.last_read_seq > 0,
        last_read_seq = greatest(thread_followers.last_read_seq, EXCLUDED.last_read_seq), updated_at = EXCLUDED.updated_at
      WHERE EXCLUDED.last_read_seq > thread_followers.last_read_seq OR (EXCLUDED.last_read_seq > 0 AND NOT thread_followers.following))`
