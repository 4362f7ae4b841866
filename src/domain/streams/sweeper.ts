import { findIdleStreams } from '../../store/streams.ts'
import type { App } from '../core/app.ts'
import { endStreaming } from './streams.ts'

/** Streams ended per pass at most; a full pass runs again at once. */
const BATCH = 100

export type StreamSweeper = { stop(): Promise<void> }

/**
 * Finishes streams idle for STREAM_IDLE_TIMEOUT_MS with their text so far, every `intervalMs`
 * (1 s: the contract allows 2 s past the timeout). Any number of instances may run it: each end
 * locks the stream's row, so one ends it and the others find it gone. Idleness is judged by the
 * stored touch (at most STORE_EVERY_MS behind) and, when the live state still exists, by its own.
 */
export function startStreamSweeper(
  app: App,
  opts: { intervalMs?: number; log?: (message: string) => void } = {},
): StreamSweeper {
  const { intervalMs = 1000, log = console.error } = opts
  let stopped = false
  let timer: NodeJS.Timeout | undefined

  const sweep = async (): Promise<number> => {
    const idleSince = Date.now() - app.settings.streamIdleTimeoutMs
    const idle = await findIdleStreams(app.db, new Date(idleSince), BATCH)
    for (const key of idle) {
      if (stopped) break
      const live = await app.realtime.streams.peek(key)
      if (live && live.touchedAt > idleSince) continue
      await endStreaming(app, key, null, null)
    }
    return idle.length
  }
  const tick = async () => {
    try {
      while (!stopped && (await sweep()) === BATCH);
    } catch (error) {
      log(`stream sweep failed: ${error instanceof Error ? error.message : String(error)}`)
    }
    if (!stopped)
      timer = setTimeout(() => {
        running = tick()
      }, intervalMs)
  }
  let running: Promise<void> = tick()
  return {
    async stop() {
      stopped = true
      clearTimeout(timer)
      await running
    },
  }
}
