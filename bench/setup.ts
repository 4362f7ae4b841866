import pg from 'pg'
import { withPgClient } from '../src/db/pg.ts'

/** Bulk fixtures written straight to the database (the benchmarks measure reads and sends, not setup). */
export { withPgClient as withClient }

/** `count` users with handles `<prefix>-0..n-1`; returns their ids in order. */
export async function insertUsers(client: pg.Client, prefix: string, count: number): Promise<number[]> {
  const { rows } = await client.query(
    `INSERT INTO users (handle, display_name) SELECT $1 || '-' || i, 'User ' || i FROM generate_series(0, $2 - 1) i RETURNING id`,
    [prefix, count],
  )
  return rows.map((r) => Number(r.id))
}

/** `count` GROUP conversations with every one of `memberIds` as a member; returns their ids. */
export async function insertGroups(client: pg.Client, count: number, memberIds: number[]): Promise<number[]> {
  const { rows } = await client.query(
    `INSERT INTO conversations (type, title, history_visibility) SELECT 'GROUP', 'bench ' || i, 'SHARED' FROM generate_series(1, $1) i RETURNING id`,
    [count],
  )
  const ids = rows.map((r) => Number(r.id))
  await client.query(
    `INSERT INTO conversation_members (conversation_id, user_id, role)
     SELECT c, u, 'MEMBER' FROM unnest($1::bigint[]) c CROSS JOIN unnest($2::bigint[]) u`,
    [ids, memberIds],
  )
  return ids
}

/** `count` text messages appended to one conversation by `senderId` (seq and pts continue from the row). */
export async function insertMessages(
  client: pg.Client,
  conversationId: number,
  senderId: number,
  count: number,
): Promise<void> {
  await client.query('BEGIN')
  const { rows } = await client.query('SELECT last_seq FROM conversations WHERE id = $1 FOR UPDATE', [conversationId])
  const from = Number(rows[0].last_seq)
  await client.query(
    `INSERT INTO messages (conversation_id, seq, pts, sender_type, sender_id, kind, client_message_id, content, sent_at)
     SELECT $1, s, s, 'USER', $2, 'TEXT', 'seed-' || s, jsonb_build_object('text', 'message ' || s), now() - make_interval(secs => ($3 - s))
     FROM generate_series($4::bigint, $3::bigint) s`,
    [conversationId, senderId, from + count, from + 1],
  )
  await client.query('UPDATE conversations SET last_seq = $2, last_pts = $2, last_activity_at = now() WHERE id = $1', [
    conversationId,
    from + count,
  ])
  await client.query('COMMIT')
}

/** One group whose only member, `reader-0`, wrote `count` messages; returns the conversation's id. */
export async function insertReadersConversation(databaseUrl: string, count: number): Promise<number> {
  return withPgClient(databaseUrl, async (client) => {
    const [reader] = await insertUsers(client, 'reader', 1)
    const [id] = await insertGroups(client, 1, [reader!])
    await insertMessages(client, id!, reader!, count)
    await client.query('VACUUM ANALYZE messages')
    return id!
  })
}
