import { messageKeyText } from '../core/ids.ts'
import { groupBy } from '../../lib/groupBy.ts'
import type { RealtimeEvent } from '../../realtime/events.ts'
import { findVisibleMessages } from '../../store/messages.ts'
import { claimDueReminders, markRemindersFired, type ClaimedReminder } from '../../store/userActions.ts'
import type { App } from '../core/app.ts'
import { isRecalled } from '../policy/policy.ts'

/** How long a claim holds a due reminder: a scheduler that dies with it lets another fire it after this. */
const REMINDER_LEASE_MS = 30_000

/**
 * The events of claimed reminders: a reminder whose message its owner can no longer see (deleted
 * for them, left the conversation) or that was recalled is used up without one.
 */
async function dueEvents(app: App, claimed: readonly ClaimedReminder[]): Promise<RealtimeEvent[]> {
  const byUser = groupBy(claimed, (r) => r.userId)
  const events: RealtimeEvent[] = []
  // One visibility read per owner: the shared rule is per reader.
  for (const [userId, reminders] of byUser) {
    const visible = new Set(
      (await findVisibleMessages(app.db, { userId }, reminders)).filter((m) => !isRecalled(m)).map(messageKeyText),
    )
    events.push(...reminders.filter((r) => visible.has(messageKeyText(r))).map(reminderDue))
  }
  return events
}

/**
 * One pass, at least once: leases up to `limit` due reminders (safe with any number of instances on
 * one database), publishes a reminderDue event on each owner's user topic, and only once the bus has
 * taken them marks them fired. A crash (or a publish Redis lost) between the steps leaves the lease to
 * expire and the reminder to fire again; its event is the same (message, remindAt), which live
 * delivery and clients deduplicate. Returns how many were claimed.
 */
export async function fireDueReminders(app: App, limit = 100, leaseMs = REMINDER_LEASE_MS): Promise<number> {
  const claimed = await claimDueReminders(app.db, limit, leaseMs)
  if (!claimed.length) return 0
  const events = await dueEvents(app, claimed)
  if (events.length && !(await app.realtime.publish(events)))
    throw new Error(`${events.length} reminder events not published; they fire again after the lease`)
  await markRemindersFired(app.db, claimed)
  return claimed.length
}

const reminderDue = (r: ClaimedReminder): RealtimeEvent => ({
  type: 'reminderDue',
  userId: r.userId,
  conversationId: r.conversationId,
  seq: r.seq,
  remindAt: r.remindAt.toISOString(),
})

export type ReminderScheduler = { stop(): Promise<void> }

/**
 * Fires due reminders every `intervalMs` (draining full batches at once) until stopped. A failed
 * pass is logged and retried on the next tick.
 */
export function startReminderScheduler(
  app: App,
  opts: { intervalMs?: number; batchSize?: number; log?: (message: string) => void } = {},
): ReminderScheduler {
  const { intervalMs = 1000, batchSize = 100, log = console.error } = opts
  let stopped = false
  let timer: NodeJS.Timeout | undefined
  let running: Promise<void> = Promise.resolve()

  const tick = async () => {
    try {
      while (!stopped && (await fireDueReminders(app, batchSize)) === batchSize);
    } catch (error) {
      log(`reminder pass failed: ${error instanceof Error ? error.message : String(error)}`)
    }
    if (!stopped)
      timer = setTimeout(() => {
        running = tick()
      }, intervalMs)
  }
  running = tick()

  return {
    async stop() {
      stopped = true
      clearTimeout(timer)
      await running
    },
  }
}
