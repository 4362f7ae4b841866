import pg from 'pg'
import { describe, expect, inject, it } from 'vitest'
import { newUsers } from './support/harness.ts'
import { createGroup, MarkRead, sendText } from './support/operations.ts'
import { UpdateSettings, ViewerSettings } from './support/settings.ts'

const rawId = (globalId: string) => Number(Buffer.from(globalId, 'base64url').toString().split(':')[1])

describe('a write PostgreSQL aborts to break a deadlock', () => {
  it('is run again and succeeds, with nothing of the aborted run left', async () => {
    const [owner, viewer] = await newUsers(2)
    const group = await createGroup(owner!, [viewer!])
    await sendText(owner!, group.id, 'unread')
    await viewer!.run(UpdateSettings, { id: group.id, input: { markedUnread: true } })
    const [conversationId, userId] = [rawId(group.id), rawId(viewer!.id)]

    // markConversationRead takes the viewer's settings row, then their member row. Another transaction
    // takes them the other way round; it waits longer before it checks for a deadlock, so PostgreSQL
    // aborts the read, which then must run again.
    const other = new pg.Client({ connectionString: inject('databaseUrl') })
    await other.connect()
    try {
      await other.query('BEGIN')
      await other.query(`SET LOCAL deadlock_timeout = '20s'`)
      await other.query('UPDATE conversation_members SET left_at = left_at WHERE conversation_id = $1 AND user_id = $2', [conversationId, userId])
      const read = viewer!.try(MarkRead, { conversationId: group.id })
      const otherPid = (await other.query('SELECT pg_backend_pid() AS pid')).rows[0].pid
      const waitsOnOther = `SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))) AS waiting`
      while (!(await other.query(waitsOnOther, [otherPid])).rows[0].waiting);
      // Waits for the read's settings row until PostgreSQL aborts the read.
      await other.query('UPDATE conversation_settings SET marked_unread = marked_unread WHERE conversation_id = $1 AND user_id = $2', [conversationId, userId])
      await other.query('COMMIT')

      const answer = await read
      expect(answer.errors).toBeUndefined()
      expect(answer.data!.markConversationRead).toMatchObject({ lastReadSeq: group.lastSeq + 1, conversation: { unreadCount: 0 } })
      expect((await viewer!.run(ViewerSettings, { id: group.id })).conversation!.viewerSettings.markedUnread).toBe(false)
    } finally {
      await other.end()
    }
  })
})
