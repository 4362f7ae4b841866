import pg from 'pg'
import { describe, expect, inject, it } from 'vitest'
import { newUsers, sqlLog } from '../support/harness.ts'
import { createGroup, MarkRead, SendMessage, sendText } from '../support/operations.ts'
import { SaveDraft, UpdateSettings, ViewerSettings } from '../support/settings.ts'

const rawId = (globalId: string) => Number(Buffer.from(globalId, 'base64url').toString().split(':')[1])

/** An outside transaction, and a wait until some backend is blocked behind one of `pids`. */
async function outsideTransaction() {
  const client = new pg.Client({ connectionString: inject('databaseUrl') })
  await client.connect()
  await client.query('BEGIN')
  const pid: number = (await client.query('SELECT pg_backend_pid() AS pid')).rows[0].pid
  const blockedBehind = async (pids: readonly number[]): Promise<number> => {
    for (;;) {
      const { rows } = await client.query(
        `SELECT pid FROM pg_stat_activity WHERE pg_blocking_pids(pid) && $1::int[] AND NOT pid = ANY($1::int[])`,
        [pids],
      )
      if (rows[0]) return rows[0].pid
    }
  }
  return { client, pid, blockedBehind }
}

/** A group with a message the viewer has not read, marked unread by the viewer; with the raw ids of both rows' key. */
async function markedUnreadGroup() {
  const [owner, viewer] = await newUsers(2)
  const group = await createGroup(owner!, [viewer!])
  await sendText(owner!, group.id, 'unread')
  await viewer!.run(UpdateSettings, { id: group.id, input: { markedUnread: true } })
  return { viewer: viewer!, group, conversationId: rawId(group.id), userId: rawId(viewer!.id) }
}

describe('a write PostgreSQL aborts to break a deadlock', () => {
  it('is run again and succeeds, with nothing of the aborted run left', async () => {
    const { viewer, group, conversationId, userId } = await markedUnreadGroup()

    // markConversationRead takes the viewer's member row, then their settings row. Another transaction
    // takes them the other way round; it waits longer before it checks for a deadlock, so PostgreSQL
    // aborts the read, which then must run again.
    const other = await outsideTransaction()
    try {
      await other.client.query(`SET LOCAL deadlock_timeout = '20s'`)
      await other.client.query(
        'UPDATE conversation_settings SET marked_unread = marked_unread WHERE conversation_id = $1 AND user_id = $2',
        [conversationId, userId],
      )
      const read = viewer.try(MarkRead, { conversationId: group.id })
      await other.blockedBehind([other.pid])
      // Waits for the read's member row until PostgreSQL aborts the read.
      await other.client.query(
        'UPDATE conversation_members SET left_at = left_at WHERE conversation_id = $1 AND user_id = $2',
        [conversationId, userId],
      )
      await other.client.query('COMMIT')

      const answer = await read
      expect(answer.errors).toBeUndefined()
      expect(answer.data!.markConversationRead).toMatchObject({
        lastReadSeq: group.lastSeq + 1,
        conversation: { unreadCount: 0 },
      })
      expect((await viewer.run(ViewerSettings, { id: group.id })).conversation!.viewerSettings.markedUnread).toBe(false)
    } finally {
      await other.client.end()
    }
  })
})

describe("one user's read and send at the same time", () => {
  it('take the member row before the settings row alike, so neither waits for a deadlock check or runs twice', async () => {
    const { viewer, group, conversationId, userId } = await markedUnreadGroup()
    // The read clears markedUnread and the send clears the draft: both write the viewer's settings row.
    await viewer.run(SaveDraft, { id: group.id, draft: { text: 'typing' } })
    const logged = sqlLog.length

    // Both queue on the viewer's member row, the send first: had the read taken the settings row
    // before it, the send would wait for the read and the read for the send. (Locked, not updated:
    // the waiters then take the row in the order they came.)
    const other = await outsideTransaction()
    try {
      await other.client.query(
        'SELECT FROM conversation_members WHERE conversation_id = $1 AND user_id = $2 FOR UPDATE',
        [conversationId, userId],
      )
      const send = viewer.try(SendMessage, {
        input: { conversationId: group.id, clientMessageId: 'with-read', content: { text: { text: 'sent' } } },
      })
      const sender = await other.blockedBehind([other.pid])
      const read = viewer.try(MarkRead, { conversationId: group.id })
      await other.blockedBehind([other.pid, sender])
      await other.client.query('COMMIT')

      const [sent, answer] = await Promise.all([send, read])
      expect(sent.errors).toBeUndefined()
      expect(answer.errors).toBeUndefined()
      const settings = (await viewer.run(ViewerSettings, { id: group.id })).conversation!.viewerSettings
      expect(settings).toMatchObject({ markedUnread: false, draft: null })
    } finally {
      await other.client.end()
    }
    // A transaction aborted for a deadlock runs again (transact): its statements would be logged twice.
    const statements = sqlLog.slice(logged)
    expect(statements.filter((q) => q.includes('SET marked_unread = false')).length).toBe(1)
    expect(statements.filter((q) => q.includes('INSERT INTO messages ')).length).toBe(1)
  })
})
