import { createRedisEventTarget } from '@graphql-yoga/redis-event-target'
import { Redis } from 'ioredis'
import type { RealtimeEvent } from './events.ts'
import { createBus, type Realtime } from './pubsub.ts'

/** Counts what crosses the Redis connections (the metrics module implements it). */
export type RedisObserver = { published(): void; publishFailed(): void; received(): void; reconnecting(): void }

/** The bus, and whether both Redis connections are up (for /readyz). */
export type RedisRealtime = Realtime & { connected(): boolean }

/**
 * Several instances: every event goes through Redis pub/sub (one channel per topic), and each
 * instance subscribes only to the topics its local subscribers need. An instance hears its own
 * publishes back through Redis, so there is one delivery path. A publish that fails (Redis away) is
 * logged, not thrown: the write is committed, and clients recover the change by resuming with sincePts.
 */
export function createRedisRealtime(
  url: string,
  opts: { subscriberBuffer?: number; log?: (message: string, error?: unknown) => void; observer?: RedisObserver } = {},
): RedisRealtime {
  const log = opts.log ?? ((message, error) => console.error(`[parley] ${message}`, error ?? ''))
  const publishClient = new Redis(url, { lazyConnect: false })
  const subscribeClient = new Redis(url, { lazyConnect: false })
  for (const client of [publishClient, subscribeClient]) client.on('error', (error) => log('redis connection error', error))
  if (opts.observer) {
    const observer = opts.observer
    for (const client of [publishClient, subscribeClient]) client.on('reconnecting', () => observer.reconnecting())
    subscribeClient.on('message', () => observer.received())
  }
  const target = createRedisEventTarget<CustomEvent>({ publishClient, subscribeClient })
  const bus = createBus(target, {
    subscriberBuffer: opts.subscriberBuffer,
    publish: (topic: string, event: RealtimeEvent) => {
      opts.observer?.published()
      return publishClient.publish(topic, JSON.stringify(event)).then(
        () => true,
        (error: unknown) => {
          opts.observer?.publishFailed()
          log(`redis publish to ${topic} failed`, error)
          return false
        },
      )
    },
    // The target sent SUBSCRIBE when the topic's first listener came; commands on one connection run
    // in order, so the reply to this repeated SUBSCRIBE means the first one is in force too.
    confirm: async (topic) => {
      await subscribeClient.subscribe(topic)
    },
    close: async () => {
      await Promise.allSettled([subscribeClient.quit(), publishClient.quit()])
    },
  })
  return { ...bus, connected: () => publishClient.status === 'ready' && subscribeClient.status === 'ready' }
}
