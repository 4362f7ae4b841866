import { readFileSync } from 'node:fs'
import path from 'node:path'
import pg from 'pg'
import { describe, expect, inject, it } from 'vitest'

/** docs/scaling.md's table: each table's distribution (`conversation_id`, `user_id`, reference). */
function documentedTables(): Map<string, string> {
  const doc = readFileSync(path.resolve(import.meta.dirname, '../../docs/scaling.md'), 'utf8')
  const rows = doc.split('\n').flatMap((line) => {
    const cells = line.split('|').map((cell) => cell.trim())
    const table = /^`([a-z_]+)`$/.exec(cells[1] ?? '')?.[1]
    const distribution = /^`?([a-z_]+)`?/.exec(cells[2] ?? '')?.[1]
    return table && distribution ? [[table, distribution] as const] : []
  })
  return new Map(rows)
}

describe('distribution by conversation (docs/scaling.md)', () => {
  it('places every table, and every conversation-distributed table has a primary key that starts with conversation_id', async () => {
    const client = new pg.Client({ connectionString: inject('databaseUrl') })
    await client.connect()
    try {
      const { rows } = await client.query<{ table: string; keyColumns: string[] | null }>(`
        SELECT t.table_name AS "table",
          (SELECT array_agg(a.attname::text ORDER BY k.ordinality)
           FROM pg_index i CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY k(attnum, ordinality)
           JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
           WHERE i.indrelid = format('%I.%I', t.table_schema, t.table_name)::regclass AND i.indisprimary) AS "keyColumns"
        FROM information_schema.tables t
        WHERE t.table_schema = 'public' AND t.table_type = 'BASE TABLE' AND t.table_name <> '_prisma_migrations'`)
      const documented = documentedTables()
      expect(rows.length).toBeGreaterThan(10)
      expect(rows.map((r) => r.table).filter((table) => !documented.has(table))).toEqual([])
      const keyedOtherwise = rows
        .filter((r) => documented.get(r.table) === 'conversation_id')
        .filter((r) =>
          r.table === 'conversations' ? r.keyColumns?.[0] !== 'id' : r.keyColumns?.[0] !== 'conversation_id',
        )
        .map((r) => `${r.table} (${r.keyColumns?.join(', ') ?? 'no primary key'})`)
      expect(keyedOtherwise).toEqual([])
    } finally {
      await client.end()
    }
  })
})
