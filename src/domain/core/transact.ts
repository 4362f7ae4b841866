import type { Tx } from '../../db/client.ts'
import type { RealtimeEvent } from '../../realtime/events.ts'
import { isWriteConflict } from '../../store/sql.ts'
import type { App } from './app.ts'

/** What a transaction's work returns: its result, and the events to publish once it commits. */
export type Committed<T> = { result: T; events: RealtimeEvent[] }

/** Runs of a transaction PostgreSQL aborted to break a deadlock (or a serialization failure) before the error stands. */
const CONFLICT_ATTEMPTS = 3

/**
 * Runs one interactive transaction and publishes the events it returns only after the commit
 * resolves: nothing is published for a rolled-back write. The app's recorder writes what must commit
 * with those events inside it (the webhook outbox, decision 0272). A transaction PostgreSQL chose to abort
 * to break a deadlock is run again from the start: it stored nothing, and the other side has its
 * locks now (two rows taken in opposite orders by two writes of one user, say).
 */
export async function transact<T>(app: App, work: (tx: Tx) => Promise<Committed<T>>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      let afterCommit: (() => void) | undefined
      const { result, events } = await app.db.$transaction(async (tx) => {
        const committed = await work(tx)
        afterCommit = await app.recordEvents(tx, committed.events)
        return committed
      })
      afterCommit?.()
      // Not awaited: the write stands either way. publish never rejects (a bus that is away answers
      // false), and subscribers read what they missed from the database.
      if (events.length) void app.realtime.publish(events)
      return result
    } catch (error) {
      if (attempt >= CONFLICT_ATTEMPTS || !isWriteConflict(error)) throw error
    }
  }
}
