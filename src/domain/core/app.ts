import type { Redis } from 'ioredis'
import type { UserKind } from '../../store/records.ts'
import type { Db, Tx } from '../../db/client.ts'
import type { RealtimeEvent } from '../../realtime/events.ts'
import type { Realtime } from '../../realtime/pubsub.ts'
import { isWriteConflict } from '../../store/sql.ts'
import { Hub } from '../live/hub.ts'
import { createSendQueues, type SendQueues } from '../send/queue.ts'
import { createRateLimits, type RateLimits } from '../rateLimits/rateLimits.ts'
import type { Settings } from './settings.ts'
import type { TypingThrottle } from '../live/typing.ts'

/** The authenticated caller. */
export type Viewer = { userId: number; handle: string; kind: UserKind; isOperator: boolean }

/**
 * What domain actions run against: the database, the realtime bus and the behaviour settings, and
 * the state this instance keeps per app: live delivery, the send queues, the typing throttle, the
 * rate limiters.
 */
export type App = { db: Db; realtime: Realtime; settings: Settings; hub: Hub; sends: SendQueues; typing: TypingThrottle; limits: RateLimits }

/**
 * An App around its parts; its live subscriptions end when its bus closes. `rateLimitStore` (Redis)
 * shares the rate limits' counts between instances.
 */
export function createApp({ rateLimitStore, ...parts }: { db: Db; realtime: Realtime; settings: Settings; rateLimitStore?: Redis }): App {
  const hub = new Hub(parts.db, parts.realtime)
  parts.realtime.onClose(() => hub.close())
  return { ...parts, hub, sends: createSendQueues(), typing: new Map(), limits: createRateLimits(parts.db, parts.settings.rateLimits, rateLimitStore) }
}

export type Outcome<T> = { result: T; events: RealtimeEvent[] }

/** Runs of a transaction PostgreSQL aborted to break a deadlock (or a serialization failure) before the error stands. */
const CONFLICT_ATTEMPTS = 3

/**
 * Runs one interactive transaction and publishes the events it returns only after the commit
 * resolves: nothing is published for a rolled-back write. A transaction PostgreSQL chose to abort
 * to break a deadlock is run again from the start: it stored nothing, and the other side has its
 * locks now (two rows taken in opposite orders by two writes of one user, say).
 */
export async function transact<T>(app: App, work: (tx: Tx) => Promise<Outcome<T>>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      const { result, events } = await app.db.$transaction(work)
      if (events.length) app.realtime.publish(events)
      return result
    } catch (error) {
      if (attempt >= CONFLICT_ATTEMPTS || !isWriteConflict(error)) throw error
    }
  }
}
