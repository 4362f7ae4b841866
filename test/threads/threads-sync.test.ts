import { describe, expect, it } from 'vitest'
import { parseId } from '../../src/domain/core/ids.ts'
import { newUsers } from '../support/harness.ts'
import { createGroup, sendText } from '../support/operations.ts'
import { liveServer, subscribeWs, waitForSubscriptions } from '../support/server.ts'
import { SyncToken } from '../support/sync.ts'
import { FollowThread, MarkThreadRead, reply } from '../support/threads.ts'
import { ThreadSync, ThreadViewerUpdates } from '../support/threadStreams.ts'

const instance = liveServer()

describe('threads and account sync', () => {
  it('sync(since) reports replies as conversation changes and the viewer’s thread states, each thread once', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    const root = (await sendText(alice!, group.id, 'question')).message
    const since = (await alice!.run(SyncToken)).viewer.syncToken
    const first = await reply(bob!, group.id, root.id)
    let batch = (await alice!.run(ThreadSync, { since })).sync
    // The reply moved the conversation; the root's sender now follows the thread (nothing read yet).
    expect(batch.conversations.map((c) => c.id)).toEqual([group.id])
    expect(batch.threadStates).toEqual([{ rootId: root.id, following: true, lastReadSeq: 0 }])
    await alice!.run(MarkThreadRead, { messageId: root.id })
    await alice!.run(FollowThread, { messageId: root.id, follow: false })
    const next = (await alice!.run(ThreadSync, { since: batch.token })).sync
    expect(next.conversations).toEqual([])
    expect(next.threadStates).toEqual([{ rootId: root.id, following: false, lastReadSeq: first.seq }])
    // Changing nothing syncs nothing.
    await alice!.run(FollowThread, { messageId: root.id, follow: false })
    batch = (await alice!.run(ThreadSync, { since: next.token })).sync
    expect(batch).toMatchObject({ conversations: [], threadStates: [], token: next.token })
  })

  it('viewerUpdates brings a thread read and a follow made on another device', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    const root = (await sendText(bob!, group.id, 'question')).message
    const r = await reply(bob!, group.id, root.id)
    const since = (await alice!.run(SyncToken)).viewer.syncToken
    const open = instance.server.app.hub.stats(parseId(alice!.id, 'User')).subscriptions
    const stream = subscribeWs(instance.connect(alice!.token), ThreadViewerUpdates, { since })
    await waitForSubscriptions(instance.server.app, alice!, open + 1)
    await alice!.run(FollowThread, { messageId: root.id, follow: true })
    await alice!.run(MarkThreadRead, { messageId: root.id })
    const events = await stream.waitUntil((all) =>
      all.some((e) => 'lastReadSeq' in e.viewerUpdates.event && e.viewerUpdates.event.lastReadSeq === r.seq),
    )
    const threadEvents = events.map((e) => e.viewerUpdates.event).filter((e) => e.__typename === 'ThreadUpdatedEvent')
    expect(threadEvents.at(-1)).toEqual({
      __typename: 'ThreadUpdatedEvent',
      rootId: root.id,
      following: true,
      lastReadSeq: r.seq,
      root: { seq: root.seq },
    })
    expect(stream.errors).toEqual([])
    stream.dispose()
  })
})
