import { createRedisEventTarget } from '@graphql-yoga/redis-event-target'
import { Redis } from 'ioredis'
import type { RealtimeEvent } from './events.ts'
import { createBus, type Realtime } from './pubsub.ts'
import { redisStreamStates } from './redisStreams.ts'

/** Counts what crosses the Redis connections (the metrics module implements it). */
export type RedisObserver = { published(): void; publishFailed(): void; received(): void; reconnecting(): void }

/** The bus, and whether both Redis connections are up (for /readyz). */
export type RedisRealtime = Realtime & { connected(): boolean }

/**
 * Several instances: every event goes through Redis pub/sub (one channel per topic), and each
 * instance subscribes only to the topics its local subscribers need. An instance hears its own
 * publishes back through Redis, so there is one delivery path. While Redis is away a publish fails at
 * once (no offline queue, so memory stays bounded) and is not retried: the write is committed, and
 * once Redis is back every conversation feed reads what it missed from the database (onReconnect);
 * typing and read events of the outage are lost. Outages are logged once each way, not per event.
 */
export function createRedisRealtime(
  url: string,
  opts: { subscriberBuffer?: number; log?: (message: string, error?: unknown) => void; observer?: RedisObserver } = {},
): RedisRealtime {
  const log = opts.log ?? ((message, error) => console.error(`[parley] ${message}`, error ?? ''))
  // Queued until first connected (start-up), then never: a publish while Redis is away fails at once.
  const publishClient = new Redis(url, { lazyConnect: false })
  publishClient.once('ready', () => (publishClient.options.enableOfflineQueue = false))
  const subscribeClient = new Redis(url, { lazyConnect: false })
  for (const [name, client] of [
    ['publish', publishClient],
    ['subscribe', subscribeClient],
  ] as const) {
    let state: 'connecting' | 'up' | 'down' = 'connecting'
    client.on('ready', () => {
      if (state === 'down') log(`redis ${name} connection back`)
      state = 'up'
    })
    client.on('error', (error) => {
      if (state !== 'down') log(`redis ${name} connection error; reconnecting`, error)
      state = 'down'
    })
  }
  if (opts.observer) {
    const observer = opts.observer
    for (const client of [publishClient, subscribeClient]) client.on('reconnecting', () => observer.reconnecting())
    subscribeClient.on('message', () => observer.received())
  }
  const reconnectHooks: (() => void)[] = []
  let subscribedBefore = false
  subscribeClient.on('ready', () => {
    if (!subscribedBefore) return void (subscribedBefore = true)
    // ioredis re-sent the SUBSCRIBEs on reconnecting; a PING answered after them means they are in
    // force, so whatever the database shows from then on is also delivered live.
    void subscribeClient.ping().then(
      () => reconnectHooks.forEach((hook) => hook()),
      () => {},
    )
  })
  const target = createRedisEventTarget<CustomEvent>({ publishClient, subscribeClient })
  let publishing = true
  const bus = createBus(target, {
    subscriberBuffer: opts.subscriberBuffer,
    publish: (topic: string, event: RealtimeEvent) => {
      opts.observer?.published()
      return publishClient.publish(topic, JSON.stringify(event)).then(
        () => (publishing = true),
        (error: unknown) => {
          opts.observer?.publishFailed()
          if (publishing)
            log(
              'redis publish failed; events are lost until Redis is back (conversation changes are read from the database then)',
              error,
            )
          return (publishing = false)
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
    onReconnect: (hook) => reconnectHooks.push(hook),
    streams: redisStreamStates(publishClient),
  })
  return { ...bus, connected: () => publishClient.status === 'ready' && subscribeClient.status === 'ready' }
}

/**
 * The connection the rate limits count on (domain/rateLimits/rateLimits.ts): a command never waits for Redis (no
 * offline queue, no resend), so while it is away each instance counts alone. Logged once each way.
 */
export function createRateLimitRedis(url: string, log: (message: string) => void): Redis {
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    autoResendUnfulfilledCommands: false,
    maxRetriesPerRequest: 0,
  })
  let up = false
  redis.on('ready', () => {
    up = true
    log('rate limits: counting in Redis')
  })
  redis.on('error', () => {
    if (up) log('rate limits: Redis unreachable, each instance counts alone until it is back')
    up = false
  })
  return redis
}
