import { messageKeyText } from '../core/ids.ts'
import { rangeAfter, readHeads, type SyncChange, type SyncRange } from '../../store/sync.ts'
import { listMemberConversationIds } from '../../store/delivery.ts'
import type { Viewer } from '../core/app.ts'
import type { LiveApp } from './hub.ts'
import type { FriendshipState } from '../../store/friendships.ts'
import type { Delivery } from './payloads.ts'
import { guardedStream, opening } from './stream.ts'
import { Subscription } from './subscription.ts'
import {
  isConversationChange,
  isFriendshipChange,
  isRemoval,
  isStateChange,
  isThreadChange,
  readDifference,
  threadStateIn,
  tokensAfter,
  type Difference,
} from '../sync/sync.ts'
import { decodeSyncToken, encodeSyncToken } from '../sync/syncToken.ts'

/** What one event of the difference is about: a conversation (changed or removed), a message's or a thread's state, or a friendship. */
const eventKey = (change: SyncChange): string =>
  isStateChange(change)
    ? `m${messageKeyText(change)}`
    : isThreadChange(change)
      ? `t${messageKeyText(change)}`
      : isFriendshipChange(change)
        ? `f${change.conversationId}`
        : `c${change.conversationId}`

/** One viewerUpdates payload: an InboxEvent and the token after it. */
export type ViewerUpdateDelivery = { delivery: Delivery; token: string }

/**
 * The difference is read this many changes per statement, as a conversation's replay reads its
 * changes; the first read of each difference is smaller, so delivery starts while the next, larger
 * read runs (a difference of one read waits on all of it before its first event).
 */
const DIFFERENCE_PAGE = 1000
const FIRST_PAGE = 100
/** Past this many conversations delivered live since the token's snapshot, the stream re-reads the difference (tokens stay short). */
const FLOOR_LIMIT = 50

/**
 * Subscription.viewerUpdates (docs/sync.md, decision 0080). It listens like inboxEvents (the user's
 * topic, every conversation's feed), then streams the sync difference after `since` and after that
 * the live events. Messages come live from the feeds, in pts order; the viewer's own changes (reads,
 * joins, removals, message states, settings) only wake it: it reads them from the difference, so
 * every payload's token is exact. A token is the difference's snapshot plus, for conversations
 * whose MessageEvents went out after it, the pts delivered (`floors`): a resume skips exactly those.
 */
export async function openViewerUpdates(
  app: LiveApp,
  viewer: Viewer,
  since: string | null | undefined,
): Promise<AsyncIterableIterator<ViewerUpdateDelivery>> {
  const start = since == null ? null : decodeSyncToken(since, viewer.userId, 'since').range
  const subscription = new Subscription(app.hub, viewer, 'account')
  const read = (page: SyncRange, limit: number, heads?: readonly number[]) => {
    const diff = readDifference(app.db, viewer, page, limit, heads)
    diff.catch(() => {}) // awaited by difference(), unless the subscriber leaves first
    return { page, diff }
  }
  /**
   * Each followed conversation's messages count as live past its last_pts at the snapshot the
   * stream's first token stands for, read in the statement that takes that snapshot: what is at or
   * below it is known to the token or comes in the difference, what is above it committed after the
   * feeds listened (decision 0200).
   */
  const startAt = (heads: Map<number, number>) => {
    for (const [id, lastPts] of heads)
      subscription.delivered.set(id, Math.max(subscription.delivered.get(id) ?? 0, lastPts))
  }
  let resumed: ReturnType<typeof read> | null = null
  let range: SyncRange = await opening(subscription, async () => {
    // Listen first: whatever commits after the snapshot below then arrives live or wakes the stream.
    await subscription.listenUser()
    const ids = await listMemberConversationIds(app.db, viewer.userId)
    await subscription.joinAll(ids)
    if (start) {
      // The difference's first read; a failure of it (RESYNC_REQUIRED) is the stream's first item.
      resumed = read(start, FIRST_PAGE, ids)
      startAt((await resumed.diff.catch(() => null))?.heads ?? new Map())
      return start
    }
    const { snapshot, heads } = await readHeads(app.db, ids)
    startAt(heads)
    return { since: snapshot, mid: null, after: null, floors: [] }
  })
  const floors = new Map(range.floors)
  const token = () => encodeSyncToken({ userId: viewer.userId, range: { ...range, floors: [...floors] } })

  /** The difference after `range` as events (its first read `first`, if already made); afterwards `range` is its snapshot with nothing pending. */
  async function* difference(
    first = read({ ...range, floors: [...floors] }, FIRST_PAGE),
  ): AsyncGenerator<ViewerUpdateDelivery> {
    // The next page is read while this one is delivered (it depends only on this page's range, snapshot and last change).
    let next = first
    for (;;) {
      const { page, diff: reading } = next
      const diff = await reading
      if (diff.hasMore) next = read(rangeAfter(page, diff.snapshot, diff.changes.at(-1)!), DIFFERENCE_PAGE)
      for (const update of await events(diff, page)) yield update
      if (!diff.hasMore) {
        range = { since: diff.snapshot, mid: null, after: null, floors: [] }
        floors.clear()
        return
      }
    }
  }

  /**
   * One event per conversation and message, at its last change in the page, so each token covers what
   * came before it. The page's events share one set of loaders (primed with its conversations): they
   * all stand for its one snapshot. Made for the whole page at once, not one async step each: live
   * events wait until the page is delivered either way.
   */
  async function events(diff: Difference, page: SyncRange): Promise<ViewerUpdateDelivery[]> {
    const updates: ViewerUpdateDelivery[] = []
    const lastIndex = new Map(diff.changes.map((c, i) => [eventKey(c), i]))
    const tokenAfter = tokensAfter(viewer.userId, page, diff)
    const loaders = subscription.loaders()
    for (const [id, access] of diff.conversations) loaders.conversations.prime(id, access)
    for (const [i, change] of diff.changes.entries()) {
      if (lastIndex.get(eventKey(change)) !== i) continue
      const id = change.conversationId
      let delivery: Delivery | null = null
      if (isRemoval(change)) {
        subscription.leave(id)
        floors.delete(id)
        delivery = { payload: { typename: 'ConversationRemovedEvent', conversationId: id }, loaders }
      } else if (isThreadChange(change)) {
        delivery = { payload: { typename: 'ThreadUpdatedEvent', ...threadStateIn(change) }, loaders }
      } else if (isFriendshipChange(change)) {
        const state = change.action as FriendshipState
        delivery = { payload: { typename: 'FriendshipEvent', userId: id, state }, loaders }
      } else if (isConversationChange(change)) {
        const access = diff.conversations.get(id)
        if (access) {
          // Live MessageEvents up to this state are covered by this event: the feed skips them.
          if (!subscription.delivered.has(id)) await subscription.join(id)
          subscription.delivered.set(id, Math.max(subscription.delivered.get(id) ?? 0, access.conversation.lastPts))
          delivery = { payload: { typename: 'ConversationUpdatedEvent', conversation: access }, loaders }
        }
      } else {
        const messageKey = { conversationId: id, seq: change.seq }
        delivery = {
          payload: {
            typename: 'MessageActionEvent',
            key: messageKey,
            state: diff.states.get(messageKeyText(messageKey))!,
          },
          loaders,
        }
      }
      if (delivery) updates.push({ delivery, token: tokenAfter(i) })
    }
    return updates
  }

  async function* stream(): AsyncGenerator<ViewerUpdateDelivery> {
    if (resumed) yield* difference(resumed)
    for (let delivery = await subscription.nextLive(); delivery; delivery = await subscription.nextLive()) {
      const payload = delivery.payload
      if (payload.typename === 'AccountChanged') {
        yield* difference()
        continue
      }
      if (payload.typename === 'MessageEvent')
        floors.set(
          payload.message.conversationId,
          subscription.delivered.get(payload.message.conversationId) ?? payload.pts,
        )
      yield { delivery, token: token() }
      if (floors.size >= FLOOR_LIMIT) yield* difference()
    }
  }

  return guardedStream(subscription, stream, (error) => ({ delivery: subscription.fail(error), token: token() }))
}
