import type { StreamLimits } from '../../realtime/streams.ts'
import { LIMITS } from '../core/limits.ts'

/** The stored text lags the live one by at most this long while deltas come (readers and a restart see it). */
export const STORE_EVERY_MS = 250
/** Deltas one stream takes per second (RATE_LIMITED past it): a fast model's tokens, not a flood. */
export const DELTAS_PER_SECOND = 250

export const STREAM_LIMITS: StreamLimits = {
  maxChars: LIMITS.textLength,
  perSecond: DELTAS_PER_SECOND,
  storeEveryMs: STORE_EVERY_MS,
}
