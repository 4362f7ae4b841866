import { describe, expect, it } from 'vitest'
import { codes, newUser, newUsers, type TestUser } from '../support/harness.ts'
import {
  FriendLists,
  FriendNotices,
  FriendshipWith,
  RemoveFriend,
  RequestFriendship,
  RespondToFriendship,
} from '../support/friends.ts'
import { BlockUser, OpenPrivate, UnblockUser, sendText } from '../support/operations.ts'

const stateBetween = async (viewer: TestUser, other: TestUser) =>
  ((await viewer.run(FriendshipWith, { id: other.id })).node as { viewerFriendship: string }).viewerFriendship
const both = async (a: TestUser, b: TestUser) => [await stateBetween(a, b), await stateBetween(b, a)]
const request = async (from: TestUser, to: TestUser) =>
  (await from.run(RequestFriendship, { userId: to.id })).requestFriendship
const respond = async (from: TestUser, to: TestUser, accept: boolean) =>
  (await from.run(RespondToFriendship, { userId: to.id, accept })).respondToFriendship
const remove = async (from: TestUser, to: TestUser) => (await from.run(RemoveFriend, { userId: to.id })).removeFriend
const lists = async (user: TestUser) => {
  const { friends, friendRequests } = (await user.run(FriendLists, {})).viewer
  return { friends: friends.edges.map((e) => e.node.id), requests: friendRequests.edges.map((e) => e.node.id) }
}

/** The pair's private conversation (opened or reused) and its FRIEND_ADDED notices. */
async function friendNotices(a: TestUser, b: TestUser) {
  const id = (await a.run(OpenPrivate, { userId: b.id })).openPrivateConversation.id
  const edges = (await a.run(FriendNotices, { id })).conversation!.messages.edges
  return edges.map((e) => e.node.content).filter((c) => c && 'event' in c && c.event === 'FRIEND_ADDED')
}

describe('friendship', () => {
  it('goes through every transition, seen alike from both sides', async () => {
    const [alice, bob] = (await newUsers(2)) as [TestUser, TestUser]
    expect(await both(alice, bob)).toEqual(['NONE', 'NONE'])

    expect(await request(alice, bob)).toBe('REQUESTED_BY_VIEWER')
    expect(await both(alice, bob)).toEqual(['REQUESTED_BY_VIEWER', 'REQUESTED_BY_THEM'])
    expect(await lists(bob)).toEqual({ friends: [], requests: [alice.id] })
    expect(await lists(alice)).toEqual({ friends: [], requests: [] })
    // Asking again changes nothing.
    expect(await request(alice, bob)).toBe('REQUESTED_BY_VIEWER')

    // Declined.
    expect(await respond(bob, alice, false)).toBe('NONE')
    expect(await both(alice, bob)).toEqual(['NONE', 'NONE'])
    expect(await lists(bob)).toEqual({ friends: [], requests: [] })

    // Withdrawn by the asker.
    await request(alice, bob)
    expect(await remove(alice, bob)).toBe('NONE')
    expect(await both(alice, bob)).toEqual(['NONE', 'NONE'])

    // Accepted: friends, and their private conversation says so once.
    await request(alice, bob)
    expect(await respond(bob, alice, true)).toBe('FRIENDS')
    expect(await both(alice, bob)).toEqual(['FRIENDS', 'FRIENDS'])
    expect(await lists(alice)).toEqual({ friends: [bob.id], requests: [] })
    expect(await lists(bob)).toEqual({ friends: [alice.id], requests: [] })
    expect(await respond(bob, alice, true)).toBe('FRIENDS')
    expect(await request(alice, bob)).toBe('FRIENDS')
    const notices = await friendNotices(alice, bob)
    expect(notices).toHaveLength(1)
    expect(notices[0]).toMatchObject({ actor: { id: bob.id }, targets: [{ id: alice.id }] })
    expect((notices[0] as { text: string }).text).toMatch(/ and .* are now friends$/)

    // Removed: NONE for both; the conversation and its history stay.
    const conversationId = (await alice.run(OpenPrivate, { userId: bob.id })).openPrivateConversation.id
    await sendText(alice, conversationId, 'still here')
    expect(await remove(bob, alice)).toBe('NONE')
    expect(await both(alice, bob)).toEqual(['NONE', 'NONE'])
    expect(await lists(alice)).toEqual({ friends: [], requests: [] })
    expect(await remove(bob, alice)).toBe('NONE')

    // Asking someone who asked you makes you friends, in the same conversation: a second notice.
    expect(await request(bob, alice)).toBe('REQUESTED_BY_VIEWER')
    expect(await request(alice, bob)).toBe('FRIENDS')
    expect(await both(alice, bob)).toEqual(['FRIENDS', 'FRIENDS'])
    expect(await friendNotices(bob, alice)).toHaveLength(2)
    expect((await alice.run(OpenPrivate, { userId: bob.id })).openPrivateConversation.id).toBe(conversationId)
  })

  it('refuses answers without a request, oneself and unknown users, storing nothing', async () => {
    const [alice, bob] = (await newUsers(2)) as [TestUser, TestUser]
    expect(codes(await alice.try(RespondToFriendship, { userId: bob.id, accept: true }))).toEqual(['NOT_FOUND'])
    expect(codes(await alice.try(RespondToFriendship, { userId: bob.id, accept: false }))).toEqual([])
    await request(alice, bob)
    // The asker cannot answer their own request.
    expect(codes(await alice.try(RespondToFriendship, { userId: bob.id, accept: true }))).toEqual(['NOT_FOUND'])
    expect(codes(await alice.try(RequestFriendship, { userId: alice.id }))).toEqual(['BAD_USER_INPUT'])
    expect(codes(await alice.try(RequestFriendship, { userId: 'VXNlcjo5OTk5OTk5OTk5' }))).toEqual(['NOT_FOUND'])
    expect(await both(alice, bob)).toEqual(['REQUESTED_BY_VIEWER', 'REQUESTED_BY_THEM'])
  })

  it('makes concurrent cross requests friends once, with one FRIEND_ADDED message', async () => {
    const pairs = await Promise.all(Array.from({ length: 8 }, () => newUsers(2) as Promise<[TestUser, TestUser]>))
    const outcomes = await Promise.all(pairs.map(([a, b]) => Promise.all([request(a, b), request(b, a)])))
    for (const [i, [a, b]] of pairs.entries()) {
      expect(outcomes[i]!.sort()).toEqual(['FRIENDS', 'REQUESTED_BY_VIEWER'])
      expect(await both(a, b)).toEqual(['FRIENDS', 'FRIENDS'])
      expect(await friendNotices(a, b)).toHaveLength(1)
    }
  })

  it('lets blocks win: no requests either way, and blocking drops a pending one', async () => {
    const [alice, bob, carol] = (await newUsers(3)) as [TestUser, TestUser, TestUser]
    await alice.run(BlockUser, { userId: bob.id })
    expect(codes(await bob.try(RequestFriendship, { userId: alice.id }))).toEqual(['BLOCKED'])
    expect(codes(await alice.try(RequestFriendship, { userId: bob.id }))).toEqual(['BLOCKED'])
    expect(await both(alice, bob)).toEqual(['NONE', 'NONE'])
    await alice.run(UnblockUser, { userId: bob.id })
    expect(await request(bob, alice)).toBe('REQUESTED_BY_VIEWER')

    // A pending request goes when either side blocks.
    await request(carol, alice)
    await alice.run(BlockUser, { userId: carol.id })
    expect(await both(alice, carol)).toEqual(['NONE', 'NONE'])
    expect(await lists(alice)).toEqual({ friends: [], requests: [bob.id] })
    await bob.run(BlockUser, { userId: alice.id })
    expect(await both(alice, bob)).toEqual(['NONE', 'NONE'])
    expect(codes(await alice.try(RespondToFriendship, { userId: bob.id, accept: true }))).toEqual(['NOT_FOUND'])
  })

  it('never leaves a request pending beside a block, however a request and a block race', async () => {
    const pairs = await Promise.all(Array.from({ length: 6 }, () => newUsers(2) as Promise<[TestUser, TestUser]>))
    const outcomes = await Promise.all(
      pairs.map(([a, b]) =>
        Promise.all([a.try(RequestFriendship, { userId: b.id }), b.try(BlockUser, { userId: a.id })]),
      ),
    )
    for (const [i, [a, b]] of pairs.entries()) {
      const [asked, blocked] = outcomes[i]!
      expect(codes(blocked)).toEqual([])
      // Either the block came first (BLOCKED) or the request did and the block dropped it.
      expect([[], ['BLOCKED']]).toContainEqual(codes(asked))
      expect(await both(a, b)).toEqual(['NONE', 'NONE'])
    }
  })

  it('pages friends by display name and requests newest first', async () => {
    const viewer = await newUser()
    const [zed, amy, kim] = await Promise.all(['Zed', 'Amy', 'Kim'].map((name) => newUser({ name })))
    for (const friend of [zed!, amy!, kim!]) {
      await request(friend, viewer)
      await respond(viewer, friend, true)
    }
    // Made one after another: should two requests share a millisecond, the later user's id breaks the tie alike.
    const first = await newUser()
    const second = await newUser()
    const third = await newUser()
    for (const asker of [first, second, third]) await request(asker, viewer)
    const pageOne = (await viewer.run(FriendLists, { first: 2 })).viewer
    expect(pageOne.friends.edges.map((e) => e.node.id)).toEqual([amy!.id, kim!.id])
    expect(pageOne.friendRequests.edges.map((e) => e.node.id)).toEqual([third.id, second.id])
    expect(pageOne.friendRequests.edges.map((e) => e.node.viewerFriendship)).toEqual([
      'REQUESTED_BY_THEM',
      'REQUESTED_BY_THEM',
    ])
    const pageTwo = (
      await viewer.run(FriendLists, {
        first: 2,
        friendsAfter: pageOne.friends.pageInfo.endCursor,
        requestsAfter: pageOne.friendRequests.pageInfo.endCursor,
      })
    ).viewer
    expect(pageTwo.friends.edges.map((e) => e.node.id)).toEqual([zed!.id])
    expect(pageTwo.friendRequests.edges.map((e) => e.node.id)).toEqual([first.id])
    expect([pageOne.friends.pageInfo.hasNextPage, pageTwo.friends.pageInfo.hasNextPage]).toEqual([true, false])
  })

  it('caps pending outgoing requests at 100 (LIMIT_REACHED)', async () => {
    const asker = await newUser()
    const others = await newUsers(101)
    for (const other of others.slice(0, 100)) await request(asker, other)
    const last = others[100]!
    const refused = await asker.try(RequestFriendship, { userId: last.id })
    expect(codes(refused)).toEqual(['LIMIT_REACHED'])
    expect(await stateBetween(asker, last)).toBe('NONE')
    // An answer frees a place.
    await respond(others[0]!, asker, false)
    expect(await request(asker, last)).toBe('REQUESTED_BY_VIEWER')
  })
})
