import type { RealtimeEvent } from './events.ts'

/** A streamed message's place: the conversation and the message's seq in it. */
export type StreamKey = { conversationId: number; seq: number }

/** What a stream holds while it is written: shared by every instance (Redis), or this process's. */
type StreamState = { senderId: number; sequence: number; text: string; touchedAt: number }

/** The rules an append is checked against, passed in by the domain. */
export type StreamLimits = {
  /** Characters (UTF-16 units, as the text limit counts) the whole text may reach. */
  maxChars: number
  /** Deltas one stream takes per second; more are refused. */
  perSecond: number
  /** An append at least this long after the last stored text asks its caller to store the text. */
  storeEveryMs: number
}

type StreamAppend = StreamKey & { senderId: number; sequence: number; delta: string; now: number }

export type AppendOutcome =
  /** Accepted and published; `store`: the text is due to be written to the database. */
  | { result: 'appended'; text: string; store: boolean }
  /** The last sequence again: nothing changed, nothing published. */
  | { result: 'repeat'; text: string }
  | { result: 'gap'; expected: number }
  | { result: 'unknown' | 'notSender' | 'tooLong' | 'rateLimited' }

/**
 * The live state of streamed messages. An accepted append and the publish of its `stream` event
 * are one step (Redis: one script; in process: one synchronous call), so every subscriber hears a
 * stream's deltas in sequence order whichever instance took them.
 */
export type StreamStates = {
  /** Starts a stream's state unless one exists (a restart of the state reads it back from the database). */
  open(key: StreamKey, state: StreamState): Promise<void>
  append(append: StreamAppend, limits: StreamLimits): Promise<AppendOutcome>
  peek(key: StreamKey): Promise<StreamState | null>
  close(key: StreamKey): Promise<void>
}

type Held = StreamState & { storedAt: number; windowStart: number; inWindow: number }

const keyText = (key: StreamKey) => `${key.conversationId}:${key.seq}`

/** The check of an append against a stream's state (realtime/redisStreams.ts's script does the same in Redis). */
function checkAppend(held: Held | undefined, a: StreamAppend, limits: StreamLimits): AppendOutcome | null {
  if (!held) return { result: 'unknown' }
  if (held.senderId !== a.senderId) return { result: 'notSender' }
  if (a.sequence === held.sequence) return { result: 'repeat', text: held.text }
  if (a.sequence !== held.sequence + 1) return { result: 'gap', expected: held.sequence + 1 }
  if (held.text.length + a.delta.length > limits.maxChars) return { result: 'tooLong' }
  if (a.now - held.windowStart >= 1000) {
    held.windowStart = a.now
    held.inWindow = 0
  }
  if (held.inWindow >= limits.perSecond) return { result: 'rateLimited' }
  return null
}

/**
 * Stream states in this process, for a single instance (or apps of one process sharing an event
 * target, which share these too): the append and its publish happen in one synchronous step.
 */
export function memoryStreamStates(publish: (events: RealtimeEvent[]) => Promise<boolean>): StreamStates {
  const held = new Map<string, Held>()
  return {
    async open(key, state) {
      if (!held.has(keyText(key)))
        held.set(keyText(key), { ...state, storedAt: state.touchedAt, windowStart: 0, inWindow: 0 })
    },
    async append(a, limits) {
      const stream = held.get(keyText(a))
      const refused = checkAppend(stream, a, limits)
      if (refused) return refused
      const s = stream!
      s.inWindow++
      s.sequence = a.sequence
      s.text += a.delta
      s.touchedAt = a.now
      const store = a.now - s.storedAt >= limits.storeEveryMs
      if (store) s.storedAt = a.now
      void publish([
        {
          type: 'stream',
          conversationId: a.conversationId,
          seq: a.seq,
          sequence: a.sequence,
          delta: a.delta,
          text: s.text,
        },
      ])
      return { result: 'appended', text: s.text, store }
    },
    async peek(key) {
      const s = held.get(keyText(key))
      return s ? { senderId: s.senderId, sequence: s.sequence, text: s.text, touchedAt: s.touchedAt } : null
    },
    async close(key) {
      held.delete(keyText(key))
    },
  }
}
