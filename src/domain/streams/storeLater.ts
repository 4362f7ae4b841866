import type { App } from '../core/app.ts'
import { messageKeyText, type MessageKey } from '../core/ids.ts'
import { STORE_EVERY_MS } from './limits.ts'

/** Per app: the pending store of each stream this instance appended to last. */
const pending = new WeakMap<App, Map<string, NodeJS.Timeout>>()

/**
 * Stores a stream's text STORE_EVERY_MS after its last append on this instance, unless another
 * append comes first (which stores when due, or schedules again): when a stream pauses, readers
 * see its text so far within that time, not only at the next due store.
 */
export function storeLater(app: App, key: MessageKey, store: () => Promise<void>): void {
  let timers = pending.get(app)
  if (!timers) pending.set(app, (timers = new Map()))
  const k = messageKeyText(key)
  clearTimeout(timers.get(k))
  const timer = setTimeout(() => {
    timers.delete(k)
    store().catch(() => {
      // The next append, the finish or the idle sweeper stores it instead.
    })
  }, STORE_EVERY_MS)
  timer.unref()
  timers.set(k, timer)
}
