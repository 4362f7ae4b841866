import { DomainError, badInput } from '../core/errors.ts'
import { parseId } from '../core/ids.ts'
import { listMemberConversationIds } from '../../store/delivery.ts'
import { accessConversation } from '../policy/access.ts'
import type { Viewer } from '../core/app.ts'
import type { LiveApp } from './hub.ts'
import { optionalPosition } from '../core/input.ts'
import { batchOf, type Delivery, type DeliveryBatch } from './payloads.ts'
import { replayMissed } from './replay.ts'
import { opening, pulledStream, replayThenLive, runsThenLive } from './stream.ts'
import { Subscription } from './subscription.ts'

/**
 * Live delivery (docs/realtime.md, docs/architecture.md): the subscription actions. Per process,
 * one bus listener per topic fans events out to the local subscriptions (realtime/topics.ts); a
 * conversation's message events pass a feed that puts them in pts order without holes
 * (realtime/feed.ts); each subscription (live/subscription.ts) resolves every event as its viewer
 * may see it (live/rules.ts), from reads that run once per event for all local subscribers (live/wave.ts).
 */

export type { Delivery, DeliveryBatch, EventPayload } from './payloads.ts'

type ConversationStreamInput = { conversationId: string; sincePts?: number | null }

/**
 * Opens a conversation stream: checks access, listens (user topic, then the conversation's feed),
 * and returns the replay of the changes from sincePts up to the feed's position (empty without
 * sincePts). Live events at or below what was replayed are skipped. Errors here are the
 * subscription's errors; later ones end the stream.
 */
async function openConversation(app: LiveApp, viewer: Viewer, input: ConversationStreamInput) {
  const conversationId = parseId(input.conversationId, 'Conversation')
  const sincePts = optionalPosition(input.sincePts, 'sincePts')
  const access = await accessConversation(app.db, viewer, conversationId, { lock: false })
  if (sincePts !== null && sincePts > access.conversation.lastPts)
    throw badInput('sincePts is ahead of the conversation', 'sincePts')

  const subscription = new Subscription(app.hub, viewer, { conversationId })
  const head = await opening(subscription, async () => {
    await subscription.listenUser()
    const head = await subscription.join(conversationId)
    if (sincePts !== null && head - sincePts > app.settings.resyncLimit) {
      throw new DomainError(
        'RESYNC_REQUIRED',
        `more than ${app.settings.resyncLimit} changes since sincePts; refetch the history, then subscribe with its lastPts`,
      )
    }
    return head
  })
  const replay = sincePts === null ? null : replayMissed(app, subscription, conversationId, access, sincePts, head)
  return { subscription, replay }
}

/** A replay's pages as runs of single events, each with its page's loaders. */
async function* eachEvent(pages: AsyncIterable<DeliveryBatch>): AsyncGenerator<Delivery[]> {
  for await (const page of pages) yield page.payloads.map((payload) => ({ payload, loaders: page.loaders }))
}

/** Subscription.conversationEvents: the replay (a page handed out as one run), then live events, one event per payload. */
export async function openConversationEvents(
  app: LiveApp,
  viewer: Viewer,
  input: ConversationStreamInput,
): Promise<AsyncIterableIterator<Delivery>> {
  const { subscription, replay } = await openConversation(app, viewer, input)
  const source = runsThenLive(replay && eachEvent(replay), () => subscription.nextLive())
  return pulledStream(subscription, source, (error) => subscription.fail(error))
}

/**
 * Subscription.conversationEventBatches: the same stream, but a replay comes a page per payload, so
 * a client catching up on thousands of changes gets one execution and one frame per page instead of
 * per change. Live events come one per payload.
 */
export async function openConversationEventBatches(
  app: LiveApp,
  viewer: Viewer,
  input: ConversationStreamInput,
): Promise<AsyncIterableIterator<DeliveryBatch>> {
  const { subscription, replay } = await openConversation(app, viewer, input)
  const source = replayThenLive(replay, async () => {
    const delivery = await subscription.nextLive()
    return delivery && batchOf(delivery)
  })
  return pulledStream(subscription, source, (error) => batchOf(subscription.fail(error)))
}

/**
 * Subscription.inboxEvents: the viewer's topic plus the feeds of every conversation the viewer is
 * in (joining new ones on `joined`, leaving on `removed`), so one message costs one publish
 * whatever the size of the conversation.
 */
export async function openInboxEvents(app: LiveApp, viewer: Viewer): Promise<AsyncIterableIterator<Delivery>> {
  const subscription = new Subscription(app.hub, viewer, 'inbox')
  await opening(subscription, async () => {
    // The viewer's topic first, so a conversation joined while this runs arrives as an event.
    await subscription.listenUser()
    const ids = await listMemberConversationIds(app.db, viewer.userId)
    await subscription.joinAll(ids)
  })
  return pulledStream(subscription, { pull: () => subscription.nextLive() }, (error) => subscription.fail(error))
}
