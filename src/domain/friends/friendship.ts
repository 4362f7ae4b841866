import type { Tx } from '../../db/client.ts'
import type { RealtimeEvent } from '../../realtime/events.ts'
import { lockConversation } from '../../store/conversationLocks.ts'
import { lockUserPair, readPair, writePair, type FriendshipState, type PairRead } from '../../store/friendships.ts'
import type { App, Viewer } from '../core/app.ts'
import { DomainError, badInput, limitReached, notFound } from '../core/errors.ts'
import { parseId } from '../core/ids.ts'
import { transact, type Committed } from '../core/transact.ts'
import { privateConversationIn } from '../members/conversations.ts'
import { writeSystemMessage } from '../send/systemMessages.ts'

/**
 * The friendship state machine (issue 46, decision 0275), as the viewer sees the pair:
 * NONE → REQUESTED_BY_VIEWER (requestFriendship) → FRIENDS (the peer accepts or asks back) or NONE
 * (the peer declines, either side removes); blocks win (BLOCKED). Every change of a pair runs with
 * both users' rows locked, so concurrent calls of the pair see each other's outcome: two people
 * asking each other at once become friends once, with one FRIEND_ADDED message.
 */

/** Requests one user may have waiting for an answer; one more is LIMIT_REACHED. */
const PENDING_REQUESTS_LIMIT = 100

/** Both users hear of a change `a` made: live on inboxEvents, and on viewerUpdates through the sync difference. */
const changedFor = (a: number, b: number): RealtimeEvent[] => [
  { type: 'friendship', userId: a, peerId: b, actorId: a },
  { type: 'friendship', userId: b, peerId: a, actorId: a },
]

/** Runs `work` on the pair (viewer, userId) under both users' row locks; a missing user is NOT_FOUND. */
function onPair(
  app: App,
  viewer: Viewer,
  userId: string,
  work: (tx: Tx, pair: PairRead, peerId: number) => Promise<Committed<FriendshipState>>,
): Promise<FriendshipState> {
  const peerId = parseId(userId, 'User')
  if (peerId === viewer.userId) throw badInput('a friendship takes two users', 'userId')
  return transact(app, async (tx) => {
    const users = await lockUserPair(tx, viewer.userId, peerId)
    if (!users.has(peerId)) throw notFound('User')
    return work(tx, await readPair(tx, viewer.userId, peerId), peerId)
  })
}

const unchanged = (state: FriendshipState): Committed<FriendshipState> => ({ result: state, events: [] })

/** Sets the pair's state as the viewer sees it; both users hear of it. */
async function change(tx: Tx, viewer: Viewer, peerId: number, state: FriendshipState) {
  await writePair(tx, viewer.userId, peerId, state)
  return { result: state, events: changedFor(viewer.userId, peerId) }
}

const refuseBlocked = (pair: PairRead) => {
  if (pair.blocked) throw new DomainError('BLOCKED', 'one of you blocks the other')
}

/**
 * Friends: the pair's PRIVATE conversation is opened (or reused) and gets a SYSTEM FRIEND_ADDED
 * message, the seed's FRIEND_ADD ("you are now friends"), with the viewer as actor.
 */
async function becomeFriends(tx: Tx, viewer: Viewer, peerId: number): Promise<Committed<FriendshipState>> {
  const friends = await change(tx, viewer, peerId, 'FRIENDS')
  const opened = await privateConversationIn(tx, viewer.userId, peerId)
  const locked = (await lockConversation(tx, opened.result, viewer.userId))!
  const message = await writeSystemMessage(tx, locked.conversation, {
    event: 'FRIEND_ADDED',
    actorId: viewer.userId,
    targetIds: [peerId],
    text: null,
  })
  return { result: 'FRIENDS', events: [...friends.events, ...opened.events, message] }
}

/** Asks `userId` to be friends; asking someone who already asked the viewer makes them friends. Repeating is a no-op. */
export function requestFriendship(app: App, viewer: Viewer, userId: string): Promise<FriendshipState> {
  return onPair(app, viewer, userId, async (tx, pair, peerId) => {
    refuseBlocked(pair)
    switch (pair.state) {
      case 'FRIENDS':
      case 'REQUESTED_BY_VIEWER':
        return unchanged(pair.state)
      case 'REQUESTED_BY_THEM':
        return becomeFriends(tx, viewer, peerId)
      case 'NONE':
        if (pair.pendingOutgoing >= PENDING_REQUESTS_LIMIT)
          throw limitReached(
            `at most ${PENDING_REQUESTS_LIMIT} friend requests wait for an answer at a time`,
            PENDING_REQUESTS_LIMIT,
          )
        return change(tx, viewer, peerId, 'REQUESTED_BY_VIEWER')
    }
  })
}

/**
 * Accepts (FRIENDS) or declines (NONE) `userId`'s request. Repeating the answer is a no-op; without a
 * request to answer, NOT_FOUND.
 */
export function respondToFriendship(
  app: App,
  viewer: Viewer,
  userId: string,
  accept: boolean,
): Promise<FriendshipState> {
  return onPair(app, viewer, userId, async (tx, pair, peerId) => {
    if (pair.state === (accept ? 'FRIENDS' : 'NONE')) return unchanged(pair.state)
    if (pair.state !== 'REQUESTED_BY_THEM') throw notFound('Friend request')
    if (!accept) return change(tx, viewer, peerId, 'NONE')
    refuseBlocked(pair)
    return becomeFriends(tx, viewer, peerId)
  })
}

/**
 * Ends the friendship, and withdraws or declines a pending request: NONE either way. Their private
 * conversation and its history stay; under PRIVATE_CHAT_POLICY=friends no further sends go in.
 */
export function removeFriend(app: App, viewer: Viewer, userId: string): Promise<FriendshipState> {
  return onPair(app, viewer, userId, async (tx, pair, peerId) =>
    pair.state === 'NONE' ? unchanged('NONE') : change(tx, viewer, peerId, 'NONE'),
  )
}

/** Blocking removes a pending request between the two (either way); a friendship stays, but blocks win. */
export async function dropPendingRequest(tx: Tx, blockerId: number, blockedId: number): Promise<RealtimeEvent[]> {
  await lockUserPair(tx, blockerId, blockedId)
  const { state } = await readPair(tx, blockerId, blockedId)
  if (state !== 'REQUESTED_BY_VIEWER' && state !== 'REQUESTED_BY_THEM') return []
  await writePair(tx, blockerId, blockedId, 'NONE')
  return changedFor(blockerId, blockedId)
}
