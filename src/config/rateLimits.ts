/** Rate limits as configured: per tier of caller, each rule a number of points per window (decision 0130). */

/** Whose limits apply: operators and AGENT users can be given their own. */
export type Tier = 'user' | 'agent' | 'operator'
export const TIERS: readonly Tier[] = ['user', 'agent', 'operator']

/**
 * What is counted, and per what: sends (a burst and a sustained rate, stricter still into large
 * groups), other mutations and typing per user; subscribe operations per connection; GraphQL
 * operations without a valid token per IP.
 */
export type RateRule =
  | 'send'
  | 'sendSustained'
  | 'largeGroupSend'
  | 'largeGroupSendSustained'
  | 'mutation'
  | 'typing'
  | 'subscribe'
  | 'anonymous'
export const RATE_RULES: readonly RateRule[] = [
  'send',
  'sendSustained',
  'largeGroupSend',
  'largeGroupSendSustained',
  'mutation',
  'typing',
  'subscribe',
  'anonymous',
]

/** `points` per `seconds`, in fixed windows starting at the first use. */
type Rate = { points: number; seconds: number }
/** A tier's rules (absent = unlimited) and how many WebSockets one user may hold open (absent = any). */
type TierLimits = { rates: Partial<Record<RateRule, Rate>>; openSockets?: number }

export type RateLimitSettings = {
  tiers: Record<Tier, TierLimits>
  /** A group with more members than this is large: its sends count against the largeGroup* rules too. */
  largeGroupMembers: number
  /** Take the client address from the last X-Forwarded-For entry (behind a proxy you run). */
  trustProxy: boolean
}

const userRates: Partial<Record<RateRule, Rate>> = {
  send: { points: 10, seconds: 1 },
  sendSustained: { points: 120, seconds: 60 },
  largeGroupSend: { points: 2, seconds: 1 },
  largeGroupSendSustained: { points: 20, seconds: 60 },
  mutation: { points: 60, seconds: 10 },
  typing: { points: 30, seconds: 10 },
  subscribe: { points: 100, seconds: 10 },
  anonymous: { points: 60, seconds: 60 },
}

/** The defaults (README "Rate limits"): agents post notices and replies at machine speed, so their sends get more room. */
export const DEFAULT_RATE_LIMITS: RateLimitSettings = {
  tiers: {
    user: { rates: userRates, openSockets: 20 },
    agent: {
      rates: { ...userRates, send: { points: 50, seconds: 1 }, sendSustained: { points: 1200, seconds: 60 } },
      openSockets: 20,
    },
    operator: { rates: { ...userRates, mutation: { points: 300, seconds: 10 } }, openSockets: 20 },
  },
  largeGroupMembers: 100,
  trustProxy: false,
}

const RATE = /^(\d+)\/(\d+)$/

/**
 * RATE_LIMITS: `off`, or comma-separated `[tier.]rule=value` over the defaults; a rule without a
 * tier sets every tier. Values: `points/seconds` or `off` for rates, a count or `off` for
 * `openSockets`, a count for `largeGroupMembers`. Throws a message naming the bad entry.
 */
export function parseRateLimits(text: string | undefined, trustProxy = false): RateLimitSettings | null {
  const spec = text?.trim() ?? ''
  if (spec === 'off') return null
  const limits: RateLimitSettings = structuredClone({ ...DEFAULT_RATE_LIMITS, trustProxy })
  for (const entry of spec
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean)) {
    const [name = '', value = ''] = entry.split('=').map((s) => s.trim())
    const [tier, rule] = name.includes('.') ? (name.split('.', 2) as [string, string]) : [undefined, name]
    const fail = (why: string) => new Error(`has a bad entry "${entry}": ${why}`)
    if (tier !== undefined && !TIERS.includes(tier as Tier)) throw fail(`the tier must be one of ${TIERS.join(', ')}`)
    const tiers = tier ? [tier as Tier] : TIERS
    if (rule === 'largeGroupMembers' && !tier) {
      if (!/^\d+$/.test(value)) throw fail('must be a whole number')
      limits.largeGroupMembers = Number(value)
    } else if (rule === 'openSockets') {
      if (value !== 'off' && !/^\d+$/.test(value)) throw fail('must be a whole number or off')
      for (const t of tiers) limits.tiers[t].openSockets = value === 'off' ? undefined : Number(value)
    } else if (RATE_RULES.includes(rule as RateRule)) {
      const match = RATE.exec(value)
      if (value !== 'off' && (!match || Number(match[1]) < 1 || Number(match[2]) < 1))
        throw fail('must be points/seconds (both at least 1) or off')
      for (const t of tiers) {
        if (value === 'off') delete limits.tiers[t].rates[rule as RateRule]
        else limits.tiers[t].rates[rule as RateRule] = { points: Number(match![1]), seconds: Number(match![2]) }
      }
    } else {
      throw fail(`unknown rule; rules are ${[...RATE_RULES, 'openSockets', 'largeGroupMembers (no tier)'].join(', ')}`)
    }
  }
  return limits
}
