import { parseId } from '../core/ids.ts'
import { accessConversation } from '../policy/access.ts'
import type { App, Viewer } from '../core/app.ts'
import { isMuted } from '../policy/policy.ts'
import { badInput } from '../core/errors.ts'

/** At most one typing event per user and conversation in this interval; calls in between are no-ops. */
const TYPING_INTERVAL_MS = 2_000
/** How long a typing indicator shows unless renewed (longer than the interval, so one stays lit while typing goes on). */
const TYPING_TTL_MS = 6_000
/** An agent's status ("thinking…"): 1..64 characters. */
const STATUS_LENGTH = 64

/** Per app (App.typing): when each "<user>:<conversation>" last published on this instance. */
type TypingThrottle = Map<string, number>

/** What typing asks of the App: this instance's throttle. */
export type TypingApp = App & { typing: TypingThrottle }

const publishedRecently = (times: TypingThrottle, key: string, now: number): boolean => {
  const last = times.get(key)
  return last !== undefined && now - last < TYPING_INTERVAL_MS
}

function remember(times: TypingThrottle, key: string, now: number): void {
  // Only recent entries matter: drop the stale ones before the map grows large.
  if (times.size >= 10_000) for (const [k, at] of times) if (now - at >= TYPING_INTERVAL_MS) times.delete(k)
  times.set(key, now)
}

/**
 * "The viewer is typing": published to the conversation's topic, never stored. Members only
 * (NOT_FOUND otherwise), checked against the current membership on every call: the throttle only
 * decides whether to publish, never whether the caller may (docs/decisions/0132-access-caches.md). A
 * call within TYPING_INTERVAL_MS of the last published one, or from a muted member, answers true and
 * publishes nothing, so clients may call on every keystroke. A new `status` is a new indicator: it
 * publishes at once, the throttle counting per status.
 */
export async function sendTyping(
  app: TypingApp,
  viewer: Viewer,
  conversationId: string,
  status: string | null = null,
): Promise<boolean> {
  const id = parseId(conversationId, 'Conversation')
  if (status !== null && (status.trim().length === 0 || status.length > STATUS_LENGTH))
    throw badInput(`status must be 1..${STATUS_LENGTH} characters`, 'status')
  const key = `${viewer.userId}:${id}:${status ?? ''}`
  const { member } = await accessConversation(app.db, viewer, id, { lock: false })
  const now = Date.now()
  if (publishedRecently(app.typing, key, now) || isMuted(member, new Date(now))) return true
  remember(app.typing, key, now)
  void app.realtime.publish([
    {
      type: 'typing',
      conversationId: id,
      userId: viewer.userId,
      expiresAt: new Date(now + TYPING_TTL_MS).toISOString(),
      status,
    },
  ])
  return true
}
