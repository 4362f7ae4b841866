import type { ResultOf } from '@graphql-typed-document-node/core'
import { beforeAll, describe, expect, it } from 'vitest'
import { newUsers, testApp, type TestUser } from '../support/harness.ts'
import { userKey } from '../support/lifecycle.ts'
import { InboxEvents } from '../support/live.ts'
import { createGroup } from '../support/operations.ts'
import { seededRandom as random } from '../support/random.ts'
import { sendVia, subscribeWs, testRedisUrl, twoInstances, waitForSubscriptions } from '../support/server.ts'
import { SyncToken, ViewerUpdates } from '../support/sync.ts'

/**
 * viewerUpdates opened while messages commit: where the stream starts each conversation's live
 * messages and the snapshot its tokens stand for must be the same state, or a message in between
 * is delivered twice or not at all.
 */
const instances = twoInstances()

type Update = ResultOf<typeof ViewerUpdates>
type ViewerEvent = Update['viewerUpdates']['event']

const ROUNDS = 20
/** Conversations the viewer follows besides the four the sends go to: an opening that reads their positions takes a while. */
const QUIET = 1_500

let viewer: TestUser, owner: TestUser
let groups: { id: string; lastPts: number }[]
beforeAll(async () => {
  let other: TestUser
  ;[viewer, owner, other] = (await newUsers(3)) as [TestUser, TestUser, TestUser]
  groups = await Promise.all([0, 1, 2, 3].map(() => createGroup(owner, [viewer, other])))
  await testApp().db.$executeRaw`
    WITH c AS (INSERT INTO conversations (type, title, history_visibility) SELECT 'GROUP', 'quiet ' || i, 'SHARED' FROM generate_series(1, ${QUIET}) i RETURNING id)
    INSERT INTO conversation_members (conversation_id, user_id, role) SELECT c.id, ${BigInt(userKey(viewer.id))}, 'MEMBER' FROM c`
  // Another member's inbox on B keeps B's feeds of these conversations running (a running feed may lag the database).
  subscribeWs(instances.connect(instances.b, other.token), InboxEvents)
  await waitForSubscriptions(instances.b.app, other, 1)
})

/** The conversation an event is about, and the pts it brings the device to. */
const reached = (event: ViewerEvent): [string, number] => {
  if (event.__typename === 'MessageEvent') return [event.message.conversation.id, event.pts]
  if (event.__typename === 'ConversationUpdatedEvent') return [event.conversation.id, event.conversation.lastPts]
  throw new Error(`a ${event.__typename} brings no conversation to a pts`)
}

/**
 * Resumes viewerUpdates on B from `since` while three senders commit through both instances until
 * it is open, then sends once more to each conversation; resolves once the stream reached those last
 * sends, with the newest pts of each conversation. A repeat of anything before a last send arrives
 * before it (a feed keeps pts order).
 */
async function openDuringSends(round: number, since: string) {
  const rnd = random(round)
  const newest = new Map<string, number>()
  let opened = false
  const sends = Array.from({ length: 3 }, async (_, sender) => {
    for (let i = 0; i < 2 || !opened; i++) {
      const group = groups[rnd.int(groups.length)]!
      const sent = await sendVia((sender + i) % 2 ? instances.a : instances.b, owner, group.id, `round ${round}`)
      newest.set(group.id, Math.max(newest.get(group.id) ?? 0, sent.pts))
      if (rnd.chance(0.5)) await new Promise((resolve) => setTimeout(resolve, rnd.int(3)))
    }
  })
  const client = instances.connect(instances.b, viewer.token)
  const updates = subscribeWs(client, ViewerUpdates, { since })
  await waitForSubscriptions(instances.b.app, viewer, 1)
  opened = true
  await Promise.all(sends)
  for (const group of groups) newest.set(group.id, (await sendVia(instances.a, owner, group.id, 'last')).pts)
  await updates.waitUntil((events) =>
    [...newest].every(([id, pts]) => events.some((u) => reached(u.viewerUpdates.event).join() === [id, pts].join())),
  )
  expect(updates.errors).toEqual([])
  await client.dispose()
  await waitForSubscriptions(instances.b.app, viewer, 0)
  return { events: updates.events.map((u) => u.viewerUpdates), newest }
}

describe(`viewerUpdates' opening (instances through ${testRedisUrl ? 'Redis' : 'a shared in-process target'})`, () => {
  it('resumed while sends commit: every conversation goes from the token’s state to its newest pts with no repeat and no gap', async () => {
    // Between rounds nothing commits: what a round ended at is what the next round's token knows.
    let known = new Map(groups.map((g) => [g.id, g.lastPts]))
    for (let round = 0; round < ROUNDS; round++) {
      const since = (await viewer.run(SyncToken)).viewer.syncToken
      const covered = new Map(known)
      const { events, newest } = await openDuringSends(round, since)
      for (const { event } of events) {
        const [id, pts] = reached(event)
        if (event.__typename === 'MessageEvent')
          expect(pts, `round ${round}: MessageEvent in ${id} after ${covered.get(id)}`).toBe(covered.get(id)! + 1)
        else expect(pts, `round ${round}: ConversationUpdatedEvent of ${id}`).toBeGreaterThan(covered.get(id)!)
        covered.set(id, pts)
      }
      expect(covered).toEqual(new Map([...known, ...newest]))
      known = covered
    }
  }, 120_000)
})
