import pg from 'pg'
import { describe, expect, inject, it } from 'vitest'
import { newUsers } from '../support/harness.ts'
import { EditMessage, RecallMessage } from '../support/lifecycle.ts'
import { createGroup, sendText } from '../support/operations.ts'

/** The tables (and columns cast to text) in which `needle` appears, read straight from the database. */
async function tablesHolding(needle: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: inject('databaseUrl') })
  await client.connect()
  try {
    const { rows } = await client.query<{ table: string }>(
      `SELECT 'messages' AS table FROM messages WHERE content::text LIKE $1
       UNION ALL SELECT 'message_edits' FROM message_edits WHERE content::text LIKE $1
       UNION ALL SELECT 'message_search' FROM message_search WHERE document::text LIKE $1`,
      [`%${needle}%`],
    )
    return rows.map((r) => r.table)
  } finally {
    await client.end()
  }
}

describe('recall erases', () => {
  it('the content, every earlier version and the search document from the database', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    // Words unique to this test, so other tests' rows cannot match.
    const word = `secret${Date.now()}${Math.floor(Math.random() * 1e6)}`
    const sent = (await sendText(alice!, group.id, `first ${word}a`)).message
    await alice!.run(EditMessage, { messageId: sent.id, text: `second ${word}b` })
    await alice!.run(EditMessage, { messageId: sent.id, text: `third ${word}c` })
    expect((await tablesHolding(word)).sort()).toEqual(['message_edits', 'message_edits', 'message_search', 'messages'])

    const tombstone = (await alice!.run(RecallMessage, { messageId: sent.id })).recallMessage
    expect(tombstone.status).toBe('RECALLED')
    expect(await tablesHolding(word)).toEqual([])
  })
})
