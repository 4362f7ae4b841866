import type { Redis } from 'ioredis'
import { LRUCache } from 'lru-cache'
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible'
import type { Db } from '../../db/client.ts'
import { retryLater } from '../core/errors.ts'
import { countMembers } from '../../store/members.ts'
import { RATE_RULES, TIERS, type RateLimitSettings, type RateRule, type Tier } from '../../config/rateLimits.ts'

/** Who is counted: a viewer's tier and key, or (for `anonymous`, `subscribe`) a key of its own. */
export type Caller = { tier: Tier; key: string }

export type RateLimits = {
  /** Counts `points` against `rule` for the caller; RATE_LIMITED with retryAfterMs when over. */
  consume(rule: RateRule, caller: Caller, points?: number): Promise<void>
  /** A send into `conversationId`: the send rules, and the large-group rules too for a large group. */
  consumeSend(caller: Caller, conversationId: number): Promise<void>
  /** Opens one WebSocket for `handle`; returns its release, or null when the tier's count is reached. */
  openSocket(tier: Tier, handle: string): (() => void) | null
  /** The tier's open-socket limit (for the refusal's message). */
  socketLimit(tier: Tier): number | undefined
  readonly trustProxy: boolean
}

export const tierOf = (viewer: { isOperator: boolean; kind: string }): Tier =>
  viewer.isOperator ? 'operator' : viewer.kind === 'AGENT' ? 'agent' : 'user'
export const callerOf = (viewer: { userId: number; isOperator: boolean; kind: string }): Caller => ({
  tier: tierOf(viewer),
  key: String(viewer.userId),
})

/** Rules counted where the thing counted lives: a connection lives on one instance. */
const LOCAL_RULES: ReadonlySet<RateRule> = new Set(['subscribe'])

/** How long a group's member count is trusted for choosing its send rules. */
const MEMBER_COUNT_TTL_MS = 60_000

const UNLIMITED: RateLimits = {
  consume: async () => {},
  consumeSend: async () => {},
  openSocket: () => () => {},
  socketLimit: () => undefined,
  trustProxy: false,
}

/**
 * The limiters of one App. With `store` (Redis) the counts are shared by every instance; while
 * Redis is not ready each limiter counts in this process instead (its insurance limiter), so an
 * outage never blocks a request. Open sockets are counted per instance (decision 0130).
 */
export function createRateLimits(db: Db, settings: RateLimitSettings | null, store?: Redis): RateLimits {
  if (!settings) return UNLIMITED
  const limiters = new Map<string, RateLimiterAbstract>()
  for (const tier of TIERS) {
    for (const rule of RATE_RULES) {
      const rate = settings.tiers[tier].rates[rule]
      if (!rate) continue
      const options = { keyPrefix: `parley:rl:${tier}:${rule}`, points: rate.points, duration: rate.seconds }
      const memory = new RateLimiterMemory(options)
      limiters.set(
        `${tier}:${rule}`,
        store && !LOCAL_RULES.has(rule)
          ? new RateLimiterRedis({
              ...options,
              storeClient: store,
              rejectIfRedisNotReady: true,
              insuranceLimiter: memory,
            })
          : memory,
      )
    }
  }
  const memberCounts = new LRUCache<number, number>({ max: 50_000, ttl: MEMBER_COUNT_TTL_MS })
  const sockets = new Map<string, number>()

  async function consume(rule: RateRule, caller: Caller, points = 1): Promise<void> {
    const limiter = limiters.get(`${caller.tier}:${rule}`)
    if (!limiter) return
    try {
      await limiter.consume(caller.key, points)
    } catch (error) {
      if (!(error instanceof RateLimiterRes)) throw error
      const retryAfterMs = Math.max(1, Math.ceil(error.msBeforeNext))
      throw retryLater(
        'RATE_LIMITED',
        `too many requests (${rule}: ${limiter.points} per ${limiter.duration} s); retry in ${retryAfterMs} ms`,
        retryAfterMs,
      )
    }
  }

  async function isLarge(conversationId: number): Promise<boolean> {
    let members = memberCounts.get(conversationId)
    if (members === undefined) memberCounts.set(conversationId, (members = await countMembers(db, conversationId)))
    return members > settings!.largeGroupMembers
  }

  return {
    consume,
    async consumeSend(caller, conversationId) {
      await consume('send', caller)
      await consume('sendSustained', caller)
      const strict =
        limiters.has(`${caller.tier}:largeGroupSend`) || limiters.has(`${caller.tier}:largeGroupSendSustained`)
      if (strict && (await isLarge(conversationId))) {
        await consume('largeGroupSend', caller)
        await consume('largeGroupSendSustained', caller)
      }
    },
    openSocket(tier, handle) {
      const limit = settings.tiers[tier].openSockets
      const open = sockets.get(handle) ?? 0
      if (limit !== undefined && open >= limit) return null
      sockets.set(handle, open + 1)
      let released = false
      return () => {
        if (released) return
        released = true
        const left = (sockets.get(handle) ?? 1) - 1
        if (left > 0) sockets.set(handle, left)
        else sockets.delete(handle)
      }
    },
    socketLimit: (tier) => settings.tiers[tier].openSockets,
    trustProxy: settings.trustProxy,
  }
}
