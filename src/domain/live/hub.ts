import DataLoader from 'dataloader'
import type { Db } from '../../db/client.ts'
import type { Emit } from '../../realtime/fanout.ts'
import type { Realtime } from '../../realtime/pubsub.ts'
import { Topics } from '../../realtime/topics.ts'
import { findChangeKeys, findLastPts } from '../../store/delivery.ts'
import { kindOf } from './payloads.ts'
import { Wave } from './wave.ts'
import type { App, Viewer } from '../core/app.ts'

/** What the hub hands waves to and keeps count of (subscription.ts's Subscription). */
export interface Subscriber {
  readonly viewer: Viewer
  readonly opened: boolean
  push(wave: Wave): void
  close(): void
}

/** What live delivery asks of the App: this instance's hub. */
export type LiveApp = App & { hub: Hub }

/** One wave per bus event, handed to every local subscriber of its topic. */
const emitWave: Emit<Subscriber> = (event, subscribers, fromUserTopic) => {
  const userIds = [...new Set([...subscribers].map((s) => s.viewer.userId))]
  const wave = new Wave(event, fromUserTopic, userIds)
  for (const subscription of [...subscribers]) subscription.push(wave)
}

/** What live delivery reports to the operator's metrics (ops/metrics.ts sets it; a no-op otherwise). */
export type DeliveryObserver = { replayed(events: number): void; slowConsumerDropped(): void }

/** Told of each opened and closed subscription (domain/presence's tracker; a no-op otherwise). */
export type PresenceHooks = { connected(userId: number): void; disconnected(userId: number): void }

/**
 * Live delivery of one App (App.hub, created and closed with it): the topics this process listens
 * to, fed from the database where the bus cannot say (a feed's start, a gap), and the open
 * subscriptions.
 */
export class Hub {
  readonly topics: Topics<Subscriber>
  readonly open = new Set<Subscriber>()
  private readonly watchers = new Set<() => void>()
  observer: DeliveryObserver = { replayed() {}, slowConsumerDropped() {} }
  presence: PresenceHooks = { connected() {}, disconnected() {} }

  constructor(
    readonly db: Db,
    readonly realtime: Realtime,
    log: (message: string, error?: unknown) => void = (message, error) =>
      console.error(`[parley] ${message}`, error ?? ''),
  ) {
    // Feed starts in one tick share one statement (an inbox attaches to all its conversations at once).
    const lastPts = new DataLoader<number, number>(
      async (ids) => {
        const found = await findLastPts(db, ids)
        return ids.map((id) => found.get(id) ?? 0)
      },
      { cache: false },
    )
    this.topics = new Topics(realtime, emitWave, {
      startPts: (conversationId) => lastPts.load(conversationId),
      readGap: async (conversationId, afterPts, untilPts) =>
        (await findChangeKeys(db, conversationId, afterPts, untilPts)).map((change) => ({
          type: 'message',
          kind: kindOf(change),
          conversationId,
          seq: change.seq,
          pts: change.pts,
        })),
      log,
    })
    // Events published while the bus was away are gone; the database still has every change.
    realtime.onReconnect(() => void Promise.all(this.topics.catchUp()))
  }

  /** Subscriptions that finished opening (listening, resume position taken), and the topics listened to. */
  stats(userId?: number) {
    const live = [...this.open].filter((s) => s.opened && (userId === undefined || s.viewer.userId === userId))
    return { subscriptions: live.length, ...this.topics.counts }
  }

  /** Calls `watcher` whenever a subscription opens or closes (what waits for stats does not poll); returns the unwatch. */
  watch(watcher: () => void): () => void {
    this.watchers.add(watcher)
    return () => this.watchers.delete(watcher)
  }

  changed(): void {
    for (const watcher of [...this.watchers]) watcher()
  }

  /** Ends every local subscription (their streams complete; clients resume with sincePts). */
  close(): void {
    for (const subscription of [...this.open]) subscription.close()
  }
}
