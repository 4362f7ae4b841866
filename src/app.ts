import { randomBytes, randomUUID } from 'node:crypto'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { Redis } from 'ioredis'
import { StartupError, type Config } from './config/env.ts'
import type { Db } from './db/client.ts'
import type { ReplicaRouter } from './db/replicas.ts'
import { DEFAULT_RETRY_SCHEDULE_MS, DEFAULT_SETTINGS, type App, type Settings } from './domain/core/index.ts'
import { Hub, type LiveApp, type TypingApp } from './domain/live/index.ts'
import { createRateLimits } from './domain/rateLimits/index.ts'
import { createSendQueues, type SendApp } from './domain/send/index.ts'
import { recordWebhookDeliveries } from './domain/webhooks/index.ts'
import { recordPushJobs } from './domain/push/index.ts'
import type { Realtime } from './realtime/pubsub.ts'
import { createLocalPresence, type PresenceRegistry } from './realtime/presence.ts'
import { PresenceTracker, type PresenceApp } from './domain/presence/index.ts'
import { deriveMediaKey, localMediaStore, type FilesApp, type MediaStore } from './domain/files/index.ts'
import { AccountWatch, type AccountsApp } from './domain/governance/index.ts'

/**
 * The composition root: one Parley instance's App with the state each feature keeps per instance
 * (live delivery, the send queues, the typing throttle, the rate limiters, account changes). The schema and the
 * transport hand it to domain actions, each of which asks only for the parts it uses.
 */
export type Parley = App & LiveApp & SendApp & TypingApp & FilesApp & AccountsApp & PresenceApp

/**
 * A Parley around its parts; its live subscriptions end when its bus closes. `rateLimitStore` (Redis)
 * shares the rate limits' counts between instances. `replicas` (db/replicas.ts) take the reads
 * decision 0288 names off the primary. `media` is where uploaded bytes live and
 * `authSecret` derives the key media URLs are signed with; without them (tests that upload nothing)
 * files go to a fresh folder under the system's temporary directory, under a random key.
 * `presence` tells who is online on any instance (Redis); by default this app alone.
 */
export function createApp({
  rateLimitStore,
  media = localMediaStore(path.join(tmpdir(), `parley-media-${randomUUID()}`)),
  authSecret = randomBytes(32),
  presence = createLocalPresence(),
  ...parts
}: {
  db: Db
  realtime: Realtime
  settings: Settings
  replicas?: ReplicaRouter
  rateLimitStore?: Redis
  media?: MediaStore
  authSecret?: string | Buffer
  presence?: PresenceRegistry
}): Parley {
  const hub = new Hub(parts.db, parts.realtime)
  // The outbox: webhook deliveries, and with a push gateway one push job per added message.
  const recordEvents: App['recordEvents'] = async (tx, events) => {
    const afterCommit = await recordWebhookDeliveries(tx, events)
    if (parts.settings.push.gatewayUrl) await recordPushJobs(tx, events)
    return afterCommit
  }
  const app: App = { ...parts, recordEvents }
  const tracker = new PresenceTracker(app, presence, { debounceMs: parts.settings.presenceDebounceMs })
  hub.presence = tracker
  parts.realtime.onClose(() => {
    hub.close()
    void tracker.close()
  })
  return {
    ...parts,
    presence: tracker,
    recordEvents,
    hub,
    sends: createSendQueues(),
    typing: new Map(),
    limits: createRateLimits(parts.db, parts.settings.rateLimits, rateLimitStore),
    media,
    mediaKey: deriveMediaKey(authSecret),
    accounts: new AccountWatch(parts.realtime),
  }
}

/**
 * The behaviour settings a server runs with, from its environment; `authSecret` seals webhook
 * secrets when WEBHOOK_SECRET_KEY is not set.
 */
export function settingsFromConfig(
  config: Config,
  sensitiveWords: string[] = [],
  authSecret: string | null = null,
): Settings {
  const webhookKey = config.WEBHOOK_SECRET_KEY ?? authSecret
  // Webhook secrets are sealed with it: no key would mean sealing with an empty one.
  if (!webhookKey)
    throw new StartupError('set WEBHOOK_SECRET_KEY (webhook secrets are sealed with it) when AUTH_SECRET is not set')
  return {
    recallWindowSeconds: config.RECALL_WINDOW_SECONDS,
    readReceipts: { private: config.READ_RECEIPTS_PRIVATE, group: config.READ_RECEIPTS_GROUP },
    privateChatPolicy: config.PRIVATE_CHAT_POLICY,
    sensitiveWords,
    resyncLimit: config.RESYNC_LIMIT,
    coalesceSends: config.SEND_COALESCING,
    pinnedConversationsLimit: config.PINNED_CONVERSATIONS_LIMIT,
    searchIndexing: true,
    pinnedMessagesLimit: config.PINNED_MESSAGES_LIMIT,
    reactionLimits: { emojiPerMessage: config.REACTION_EMOJI_LIMIT, perUser: config.REACTIONS_PER_USER_LIMIT },
    rateLimits: config.RATE_LIMITS,
    webhooks: {
      retryScheduleMs: config.WEBHOOK_RETRY_SCHEDULE_MS ?? DEFAULT_RETRY_SCHEDULE_MS,
      allowedNetworks: config.WEBHOOK_ALLOWED_NETWORKS,
      allowLoopback: config.NODE_ENV === 'development',
      secretKey: webhookKey,
    },
    maxUploadBytes: config.MAX_UPLOAD_BYTES,
    push: { gatewayUrl: config.PUSH_GATEWAY_URL ?? null, preview: config.PUSH_PREVIEW },
    presenceDebounceMs: DEFAULT_SETTINGS.presenceDebounceMs,
    retention: {
      defaultSeconds: config.RETENTION_SECONDS ?? null,
      minSeconds: config.RETENTION_MIN_SECONDS,
      sweepIntervalMs: config.RETENTION_SWEEP_INTERVAL_MS,
    },
    streamIdleTimeoutMs: config.STREAM_IDLE_TIMEOUT_MS,
  }
}
