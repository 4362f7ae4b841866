import { describe, expect, it } from 'vitest'
import { newUsers, type TestUser } from '../support/harness.ts'
import {
  FriendInbox,
  FriendViewerUpdates,
  RemoveFriend,
  RequestFriendship,
  RespondToFriendship,
} from '../support/friends.ts'
import { liveServer, subscribeWs, waitForSubscriptions } from '../support/server.ts'
import { Sync, SyncToken } from '../support/sync.ts'

const instance = liveServer()

type Event = { __typename: string; state?: string; user?: { id: string } }
const friendshipEvents = (events: Event[]) => events.filter((e) => e.__typename === 'FriendshipEvent')

describe('FriendshipEvent', () => {
  it('reaches both users live on inboxEvents at every change, with the state each one sees', async () => {
    const [alice, bob] = (await newUsers(2)) as [TestUser, TestUser]
    const inboxOf = (user: TestUser) => subscribeWs(instance.connect(user.token), FriendInbox)
    const [aliceInbox, bobInbox] = [inboxOf(alice), inboxOf(bob)]
    await waitForSubscriptions(instance.server.app, alice, 1)
    await waitForSubscriptions(instance.server.app, bob, 1)
    const seen = async (n: number) => {
      const got = await Promise.all(
        [aliceInbox, bobInbox].map(async (inbox) => {
          await inbox.waitUntil((events) => friendshipEvents(events.map((e) => e.inboxEvents)).length >= n)
          return friendshipEvents(inbox.events.map((e) => e.inboxEvents))[n - 1]
        }),
      )
      return got
    }
    await alice.run(RequestFriendship, { userId: bob.id })
    expect(await seen(1)).toEqual([
      { __typename: 'FriendshipEvent', state: 'REQUESTED_BY_VIEWER', user: { id: bob.id } },
      { __typename: 'FriendshipEvent', state: 'REQUESTED_BY_THEM', user: { id: alice.id } },
    ])
    await bob.run(RespondToFriendship, { userId: alice.id, accept: true })
    expect(await seen(2)).toEqual([
      { __typename: 'FriendshipEvent', state: 'FRIENDS', user: { id: bob.id } },
      { __typename: 'FriendshipEvent', state: 'FRIENDS', user: { id: alice.id } },
    ])
    await alice.run(RemoveFriend, { userId: bob.id })
    expect(await seen(3)).toEqual([
      { __typename: 'FriendshipEvent', state: 'NONE', user: { id: bob.id } },
      { __typename: 'FriendshipEvent', state: 'NONE', user: { id: alice.id } },
    ])
  })

  it('comes on viewerUpdates from the sync difference, so a resumed stream converges', async () => {
    const [alice, bob, carol] = (await newUsers(3)) as [TestUser, TestUser, TestUser]
    const since = (await bob.run(SyncToken)).viewer.syncToken
    await alice.run(RequestFriendship, { userId: bob.id })
    await carol.run(RequestFriendship, { userId: bob.id })
    await carol.run(RemoveFriend, { userId: bob.id })

    const updates = subscribeWs(instance.connect(bob.token), FriendViewerUpdates, { since })
    await updates.waitFor(2)
    // Carol's request and withdrawal are one change of that pair: its latest state.
    expect(updates.events.map((u) => u.viewerUpdates.event)).toEqual([
      { __typename: 'FriendshipEvent', state: 'REQUESTED_BY_THEM', user: { id: alice.id } },
      { __typename: 'FriendshipEvent', state: 'NONE', user: { id: carol.id } },
    ])
    await waitForSubscriptions(instance.server.app, bob, 1)

    // Live: the change wakes the stream, which reads it from the difference.
    await bob.run(RespondToFriendship, { userId: alice.id, accept: true })
    await updates.waitUntil((events) =>
      events.some(
        (u) =>
          u.viewerUpdates.event.__typename === 'FriendshipEvent' &&
          'state' in u.viewerUpdates.event &&
          u.viewerUpdates.event.state === 'FRIENDS',
      ),
    )
    const friends = updates.events.find(
      (u) => 'state' in u.viewerUpdates.event && u.viewerUpdates.event.state === 'FRIENDS',
    )!
    expect(friends.viewerUpdates.event).toEqual({
      __typename: 'FriendshipEvent',
      state: 'FRIENDS',
      user: { id: alice.id },
    })

    // The last token covers every friendship change: a resume from it and sync after it bring none again.
    const last = updates.events.at(-1)!.viewerUpdates.token
    const resumed = subscribeWs(instance.connect(bob.token), FriendViewerUpdates, { since: last })
    await waitForSubscriptions(instance.server.app, bob, 2)
    await carol.run(RequestFriendship, { userId: bob.id })
    await resumed.waitFor(1)
    expect(resumed.events.map((u) => u.viewerUpdates.event)).toEqual([
      { __typename: 'FriendshipEvent', state: 'REQUESTED_BY_THEM', user: { id: carol.id } },
    ])
    const batch = (await bob.run(Sync, { since: resumed.events[0]!.viewerUpdates.token })).sync
    expect(batch.hasMore).toBe(false)
  })
})
