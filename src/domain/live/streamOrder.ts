import { messageKeyText, type MessageKey } from '../core/ids.ts'

/** Streams a subscription remembers (the oldest forgotten first): more than are ever written at once in its conversations. */
const STREAMS_REMEMBERED = 1000

/**
 * One subscription's position in the streamed messages it hears: a delta at or below the last one
 * it delivered (a repeat), or after the stream ended, is dropped, so each delta shows once and
 * none after STREAM_ENDED.
 */
export class StreamOrder {
  private readonly last = new Map<string, number>()

  accepts(key: MessageKey, sequence: number): boolean {
    const k = messageKeyText(key)
    if ((this.last.get(k) ?? 0) >= sequence) return false
    this.remember(k, sequence)
    return true
  }

  ended(key: MessageKey): void {
    this.remember(messageKeyText(key), Infinity)
  }

  private remember(k: string, sequence: number): void {
    this.last.delete(k)
    this.last.set(k, sequence)
    if (this.last.size > STREAMS_REMEMBERED) this.last.delete(this.last.keys().next().value!)
  }
}
