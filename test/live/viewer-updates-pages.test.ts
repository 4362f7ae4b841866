import type { ResultOf } from '@graphql-typed-document-node/core'
import { describe, expect, it } from 'vitest'
import type WebSocket from 'ws'
import { encodeGlobalId } from '../../src/domain/core/ids.ts'
import { newUsers, testApp, type TestUser } from '../support/harness.ts'
import { SetFavorite, userKey } from '../support/lifecycle.ts'
import { liveServer, sendVia, subscribeWs, wsClient } from '../support/server.ts'
import { Sync, SyncToken, ViewerUpdates } from '../support/sync.ts'

const live = liveServer()

/** More than viewerUpdates reads in its first statements of a difference (100, then 1,000 each), all changed in one transaction. */
const CONVERSATIONS = 2_100

type Update = ResultOf<typeof ViewerUpdates>
type ViewerEvent = Update['viewerUpdates']['event']

/** Conversations the viewer and `other` are members of, made in SQL (through the API this would take a minute). */
async function groupsOf(viewer: TestUser, other: TestUser, count: number): Promise<number[]> {
  const rows = await testApp().db.$queryRaw<{ id: bigint }[]>`
    WITH c AS (INSERT INTO conversations (type, title, history_visibility) SELECT 'GROUP', 'page ' || i, 'SHARED' FROM generate_series(1, ${count}) i RETURNING id),
    m AS (INSERT INTO conversation_members (conversation_id, user_id, role)
      SELECT c.id, u, 'MEMBER' FROM c CROSS JOIN unnest(${[userKey(viewer.id), userKey(other.id)].map(BigInt)}::bigint[]) u)
    SELECT id FROM c ORDER BY id`
  return rows.map((r) => Number(r.id))
}

/** One message in each conversation, in one transaction: as many changes as conversations, one transaction id. */
async function sendToAll(sender: TestUser, conversationIds: number[]): Promise<void> {
  const keys = conversationIds.map(BigInt)
  await testApp().db.$transaction([
    testApp().db.$executeRaw`
      INSERT INTO messages (conversation_id, seq, pts, sender_type, sender_id, kind, client_message_id, content, sent_at)
      SELECT c, 1, 1, 'USER', ${userKey(sender.id)}, 'TEXT', 'page', jsonb_build_object('text', 'page'), now() FROM unnest(${keys}::bigint[]) c`,
    testApp().db
      .$executeRaw`UPDATE conversations SET last_seq = 1, last_pts = 1, last_activity_at = now() WHERE id = ANY(${keys}::bigint[])`,
  ])
}

describe('viewerUpdates across difference pages', () => {
  it('resumed wherever it was cut in a difference of 2,100 conversations, read in several statements, delivers each change once', async () => {
    const [viewer, owner] = (await newUsers(2)) as [TestUser, TestUser]
    const keys = await groupsOf(viewer, owner, CONVERSATIONS)
    const ids = keys.map((id) => encodeGlobalId('Conversation', id))
    let token = (await viewer.run(SyncToken)).viewer.syncToken
    await sendToAll(owner, keys)
    // Later transactions, sorting after those 2,100 changes: a send, and a message state.
    const later = await sendVia(live.server, owner, ids[0]!, 'after them')
    await viewer.run(SetFavorite, { messageId: later.id, favorite: true })

    const known = new Map(ids.map((id) => [id, 0]))
    let favourited = 0
    const apply = (event: ViewerEvent) => {
      if (event.__typename === 'ConversationUpdatedEvent') {
        expect(event.conversation.lastPts, `ConversationUpdatedEvent of ${event.conversation.id}`).toBeGreaterThan(
          known.get(event.conversation.id)!,
        )
        known.set(event.conversation.id, event.conversation.lastPts)
      } else if (event.__typename === 'MessageEvent') {
        const id = event.message.conversation.id
        expect(event.pts, `MessageEvent in ${id}`).toBe(known.get(id)! + 1)
        known.set(id, event.pts)
      } else if (event.__typename === 'MessageActionEvent') {
        expect(event).toMatchObject({ messageId: later.id, favorite: true })
        favourited++
      }
    }
    /** A device's session: resumes with its token, keeps what arrived until the socket is cut. */
    const session = async (until: (events: Update[]) => boolean, during: () => Promise<unknown> = async () => {}) => {
      let connected!: (socket: WebSocket) => void
      const socket = new Promise<WebSocket>((resolve) => (connected = resolve))
      const client = wsClient(live.server.wsUrl, viewer.token, { on: { connected: (s) => connected(s as WebSocket) } })
      const updates = subscribeWs(client, ViewerUpdates, { since: token })
      await during()
      await updates.waitUntil(until)
      ;(await socket).terminate()
      await updates.ended()
      await client.dispose()
      for (const u of updates.events) apply(u.viewerUpdates.event)
      token = updates.events.at(-1)?.viewerUpdates.token ?? token
      return updates.events.length
    }

    // Cut early (the first read is 100), then, resumed there, past the next read of 1,000, with a live
    // send while the difference streams; then resumed again.
    expect(await session((events) => events.length >= 50)).toBeLessThan(CONVERSATIONS)
    expect(
      await session(
        (events) => events.length >= 1_200,
        () => sendVia(live.server, owner, ids.at(-1)!, 'while resuming'),
      ),
    ).toBeLessThan(CONVERSATIONS)
    const done = () =>
      ids.every((id, i) => known.get(id) === (i === 0 || i === CONVERSATIONS - 1 ? 2 : 1)) && favourited === 1
    await session((events) => {
      const [before, count] = [new Map(known), favourited]
      for (const u of events) apply(u.viewerUpdates.event)
      const ok = done()
      for (const [k, v] of before) known.set(k, v)
      favourited = count
      return ok
    })
    expect(done(), JSON.stringify([...known].filter(([, pts]) => pts !== 1))).toBe(true)
    // The last token knows everything: a sync from it answers it again, empty.
    expect((await viewer.run(Sync, { since: token })).sync).toMatchObject({
      token,
      hasMore: false,
      conversations: [],
      messageStates: [],
    })
  }, 60_000)
})
