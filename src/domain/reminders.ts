import { messageKeyText } from '../ids.ts'
import type { RealtimeEvent } from '../realtime/events.ts'
import { findVisibleMessages } from '../store/messages.ts'
import { claimDueReminders, type ClaimedReminder } from '../store/userActions.ts'
import { transact, type App } from './app.ts'
import { isRecalled } from './policy.ts'

/**
 * One pass: claims up to `limit` due reminders (safe with any number of instances on one database)
 * and, after commit, publishes a reminderDue event on each owner's user topic. A reminder whose
 * message its owner can no longer see (deleted for them, left the conversation) or that was
 * recalled is used up without an event. Returns how many were claimed.
 */
export async function fireDueReminders(app: App, limit = 100): Promise<number> {
  return transact(app, async (tx) => {
    const claimed = await claimDueReminders(tx, limit)
    const byUser = new Map<number, ClaimedReminder[]>()
    for (const r of claimed) byUser.set(r.userId, [...(byUser.get(r.userId) ?? []), r])
    const events: RealtimeEvent[] = []
    // One visibility read per owner: the shared rule is per reader.
    for (const [userId, reminders] of byUser) {
      const visible = new Set((await findVisibleMessages(tx, { userId }, reminders)).filter((m) => !isRecalled(m)).map(messageKeyText))
      events.push(...reminders.filter((r) => visible.has(messageKeyText(r))).map(reminderDue))
    }
    return { result: claimed.length, events }
  })
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
export function startReminderScheduler(app: App, opts: { intervalMs?: number; batchSize?: number; log?: (message: string) => void } = {}): ReminderScheduler {
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
    if (!stopped) timer = setTimeout(() => (running = tick()), intervalMs)
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
