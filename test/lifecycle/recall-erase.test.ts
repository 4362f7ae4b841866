import { describe, expect, it } from 'vitest'
import { tablesHolding } from '../support/database.ts'
import { newUsers } from '../support/harness.ts'
import { EditMessage, RecallMessage } from '../support/lifecycle.ts'
import { createGroup, sendText } from '../support/operations.ts'

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
