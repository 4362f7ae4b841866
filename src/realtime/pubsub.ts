import { ACCOUNTS_TOPIC, conversationTopic, userTopic, type RealtimeEvent } from './events.ts'
import { memoryStreamStates, type StreamStates } from './streams.ts'

export type Listener = (event: RealtimeEvent) => void

/**
 * The event bus: in-process, or Redis pub/sub for several instances (redis.ts). Domain actions only
 * publish (after commit); live delivery listens through realtime/topics.ts, one bus listener per topic and process.
 */
export type Realtime = {
  /**
   * Publishes; resolves true once the bus has taken every event (Redis: each PUBLISH answered), false
   * if any was lost. Never rejects: callers that need no confirmation ignore it.
   */
  publish(events: readonly RealtimeEvent[]): Promise<boolean>
  /**
   * Calls `listener` for every event on `topic`. The promise resolves once the bus delivers every
   * event published from then on (Redis: the SUBSCRIBE is confirmed), which the gap-free resume needs.
   */
  listen(topic: string, listener: Listener): Promise<void>
  unlisten(topic: string, listener: Listener): void
  /** Events one subscription may have waiting before it ends with RESYNC_REQUIRED (a slow consumer). */
  readonly subscriberBuffer: number
  /** Streamed messages' live state, beside the bus that carries their deltas (realtime/streams.ts). */
  readonly streams: StreamStates
  /** Runs `hook` first when the bus closes (delivery ends its local subscriptions). */
  onClose(hook: () => void): void
  /** Runs `hook` each time the bus is back after an outage, its topics listened to again (Redis; never in process). */
  onReconnect(hook: () => void): void
  close(): Promise<void>
}

/** Routes each event to its topic: one per conversation, one per user (never a global topic plus a filter). */
function topicsOf(event: RealtimeEvent): string[] {
  switch (event.type) {
    case 'message':
    case 'typing':
    case 'signal':
    case 'stream':
      return [conversationTopic(event.conversationId)]
    case 'read':
      return [conversationTopic(event.conversationId), userTopic(event.userId)]
    case 'joined':
    case 'removed':
    case 'reminderDue':
    case 'messageAction':
    case 'conversationUpdated':
    case 'friendship':
    case 'presence':
      return [userTopic(event.userId)]
    case 'account':
      return [ACCOUNTS_TOPIC]
  }
}

const DEFAULT_SUBSCRIBER_BUFFER = 1000

/** The part of the DOM EventTarget the buses use: Node's EventTarget, or the Redis event target. */
export type EventTargetLike = {
  addEventListener(type: string, listener: (event: Event) => void): void
  removeEventListener(type: string, listener: (event: Event) => void): void
  dispatchEvent(event: Event): boolean
}

export type BusOptions = {
  /** Share one target between two apps in a process to stand for several instances (tests). */
  eventTarget?: EventTargetLike
  subscriberBuffer?: number
}

/** Apps of one process sharing an event target (several instances in tests) share its stream states too. */
const localStreams = new WeakMap<EventTargetLike, StreamStates>()

/**
 * A bus over an event target. `confirm` resolves once the target delivers a topic (Redis: the
 * SUBSCRIBE reply); `publish` overrides dispatching (Redis: a PUBLISH whose failure is only logged).
 */
export function createBus(
  target: EventTargetLike,
  opts: {
    subscriberBuffer?: number
    confirm?: (topic: string) => Promise<void>
    publish?: (topic: string, event: RealtimeEvent) => Promise<boolean>
    close?: () => Promise<void>
    /** Registers the reconnect hook with the transport (Redis). */
    onReconnect?: (hook: () => void) => void
    /** Shared stream states (Redis); by default this process's, one set per event target. */
    streams?: StreamStates
  } = {},
): Realtime {
  // One target listener per (topic, listener), so unlisten finds the wrapper it registered.
  const wrappers = new Map<string, Map<Listener, (event: Event) => void>>()
  const closeHooks: (() => void)[] = []
  const publishOne =
    opts.publish ?? (async (topic, event) => (target.dispatchEvent(new CustomEvent(topic, { detail: event })), true))

  const publish = async (events: readonly RealtimeEvent[]) => {
    const sent = events.flatMap((event) => topicsOf(event).map((topic) => publishOne(topic, event)))
    return (await Promise.all(sent)).every(Boolean)
  }
  let streams = opts.streams ?? localStreams.get(target)
  if (!streams) localStreams.set(target, (streams = memoryStreamStates(publish)))

  const bus: Realtime = {
    subscriberBuffer: opts.subscriberBuffer ?? DEFAULT_SUBSCRIBER_BUFFER,
    publish,
    streams,
    async listen(topic, listener) {
      let byListener = wrappers.get(topic)
      if (!byListener) wrappers.set(topic, (byListener = new Map()))
      if (!byListener.has(listener)) {
        const wrapper = (event: Event) => listener((event as CustomEvent<RealtimeEvent>).detail)
        byListener.set(listener, wrapper)
        target.addEventListener(topic, wrapper)
      }
      await opts.confirm?.(topic)
    },
    unlisten(topic, listener) {
      const byListener = wrappers.get(topic)
      const wrapper = byListener?.get(listener)
      if (!byListener || !wrapper) return
      byListener.delete(listener)
      if (!byListener.size) wrappers.delete(topic)
      target.removeEventListener(topic, wrapper)
    },
    onClose(hook) {
      closeHooks.push(hook)
    },
    onReconnect: opts.onReconnect ?? (() => {}),
    async close() {
      for (const hook of closeHooks.splice(0)) hook()
      await opts.close?.()
    },
  }
  return bus
}

/** In-process bus: one instance, or several apps in one process sharing `eventTarget`. */
export function createRealtime(opts: BusOptions = {}): Realtime {
  return createBus(opts.eventTarget ?? new EventTarget(), { subscriberBuffer: opts.subscriberBuffer })
}
