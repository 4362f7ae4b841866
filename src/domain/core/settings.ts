import type { RateLimitSettings } from '../../config/rateLimits.ts'

/** Behaviour switches the domain reads (from the environment in production, set directly in tests). */
export type Settings = {
  /** How long a sender may recall their own message. */
  recallWindowSeconds: number
  /** Read receipts on/off per conversation type; read positions are kept either way. */
  readReceipts: { private: boolean; group: boolean }
  /** Lower-cased words a message may not contain (CONTENT_REJECTED). */
  sensitiveWords: string[]
  /** More missed changes than this on resume → RESYNC_REQUIRED. */
  resyncLimit: number
  /** Concurrent sends share one transaction, across conversations (one lock statement and commit for many messages). */
  coalesceSends: boolean
  /** How many conversations one user may pin (PINNED_CONVERSATIONS_LIMIT); one more is LIMIT_REACHED. */
  pinnedConversationsLimit: number
  /** Sends and edits write search documents. Off only in the benchmark that measures what indexing costs a send. */
  searchIndexing: boolean
  /** Pins a conversation holds at most (LIMIT_REACHED past it). */
  pinnedMessagesLimit: number
  /** Distinct emoji on one message, and emoji one user puts on one message (LIMIT_REACHED past them). */
  reactionLimits: { emojiPerMessage: number; perUser: number }
  /** Per-tier rate limits (RATE_LIMITS), or null for none. */
  rateLimits: RateLimitSettings | null
  /** PRIVATE_CHAT_POLICY: `friends` lets only friends chat privately (decision 0275). */
  privateChatPolicy: 'open' | 'friends'
  /** Webhook delivery (domain/webhooks): retries, reachable networks, the key that seals secrets. */
  webhooks: WebhookSettings
  /** The largest upload a slot may declare (MAX_UPLOAD_BYTES); more is BAD_USER_INPUT. */
  maxUploadBytes: number
  /** Push notifications (domain/push): the Gorush gateway (PUSH_GATEWAY_URL, null: no push) and what they show (PUSH_PREVIEW). */
  push: { gatewayUrl: string | null; preview: PushPreview }
  /** A user's presence change is announced once it held this long, so a flapping connection does not flood. */
  presenceDebounceMs: number
  /** A streamed message untouched this long is finished by the server (STREAM_IDLE_TIMEOUT_MS). */
  streamIdleTimeoutMs: number
  /** Message retention (domain/governance/retention.ts). */
  retention: RetentionSettings
}

type RetentionSettings = {
  /** RETENTION_SECONDS: how long messages are kept where a conversation sets nothing; null keeps them. */
  defaultSeconds: number | null
  /** RETENTION_MIN_SECONDS: the shortest retention setRetention accepts. */
  minSeconds: number
  /** RETENTION_SWEEP_INTERVAL_MS: how often the sweeper looks for expired messages. */
  sweepIntervalMs: number
}

/** full: sender and text; sender: the sender only; none: neither (a generic notification). */
export type PushPreview = 'full' | 'sender' | 'none'

type WebhookSettings = {
  /** Delays before each retry (WEBHOOK_RETRY_SCHEDULE_MS); when used up the delivery is FAILED. */
  retryScheduleMs: number[]
  /** Networks (CIDR) a webhook may reach although private (WEBHOOK_ALLOWED_NETWORKS). */
  allowedNetworks: string[]
  /** Loopback receivers allowed (development, tests). */
  allowLoopback: boolean
  /** Key material for the secrets' encryption (WEBHOOK_SECRET_KEY, else AUTH_SECRET). */
  secretKey: string
}

/** About 5 s, 30 s, 2 min, 10 min, 1 h, 6 h, 24 h (jittered when used). */
export const DEFAULT_RETRY_SCHEDULE_MS = [5_000, 30_000, 120_000, 600_000, 3_600_000, 21_600_000, 86_400_000]

export const DEFAULT_SETTINGS: Settings = {
  recallWindowSeconds: 120,
  readReceipts: { private: true, group: true },
  sensitiveWords: [],
  resyncLimit: 1000,
  coalesceSends: true,
  pinnedConversationsLimit: 5,
  searchIndexing: true,
  pinnedMessagesLimit: 10,
  reactionLimits: { emojiPerMessage: 20, perUser: 3 },
  // Off here: tests and benchmarks drive one user far past human rates. A server reads RATE_LIMITS,
  // whose defaults are DEFAULT_RATE_LIMITS; the rate-limit tests set their own.
  rateLimits: null,
  privateChatPolicy: 'open',
  // Tests and benchmarks run their receivers on loopback.
  webhooks: {
    retryScheduleMs: DEFAULT_RETRY_SCHEDULE_MS,
    allowedNetworks: [],
    allowLoopback: true,
    secretKey: 'parley test webhook secret key, not for production',
  },
  maxUploadBytes: 104_857_600,
  push: { gatewayUrl: null, preview: 'full' },
  presenceDebounceMs: 2000,
  retention: { defaultSeconds: null, minSeconds: 86_400, sweepIntervalMs: 60_000 },
  streamIdleTimeoutMs: 30_000,
}
