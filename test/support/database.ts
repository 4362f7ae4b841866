import pg from 'pg'
import { inject } from 'vitest'

/** Runs `work` on a plain pg client of the test database (tests that read tables the API never shows). */
export async function withDatabase<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: inject('databaseUrl') })
  await client.connect()
  try {
    return await work(client)
  } finally {
    await client.end()
  }
}

/** The tables (and columns cast to text) in which `needle` appears, read straight from the database. */
export function tablesHolding(needle: string): Promise<string[]> {
  return withDatabase(async (client) => {
    const { rows } = await client.query<{ table: string }>(
      `SELECT 'messages' AS table FROM messages WHERE content::text LIKE $1
       UNION ALL SELECT 'message_edits' FROM message_edits WHERE content::text LIKE $1
       UNION ALL SELECT 'message_search' FROM message_search WHERE document::text LIKE $1
       UNION ALL SELECT 'audit_entries' FROM audit_entries WHERE detail::text LIKE $1`,
      [`%${needle}%`],
    )
    return rows.map((r) => r.table)
  })
}
