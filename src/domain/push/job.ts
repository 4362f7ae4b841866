import { alertRule } from '../live/alertRule.ts'
import type { PresenceApp } from '../presence/presence.ts'
import { deleteDevicesByToken, findDevicesOf, markNotified } from '../../store/pushDevices.ts'
import { advancePushJob, finishPushJob, type PushJob } from '../../store/pushJobs.ts'
import { findPushCandidates, findPushMessage } from '../../store/pushRecipients.ts'
import { countUnreadTotals } from '../../store/reads.ts'
import { postNotifications, type Agents } from './gateway.ts'
import { buildRequests } from './notifications.ts'

/** Members a job reads at a time: their devices and badges take one statement each per chunk. */
const CHUNK = 1000

/** What push reports to the operator's metrics (ops/metrics.ts sets it). */
export type PushObserver = {
  sent(notifications: number): void
  failed(): void
  tokensRemoved(count: number): void
  gatewaySeconds(seconds: number): void
}

/** A message taken back before its push went out is not pushed. */
const WITHDRAWN = new Set(['RECALLED', 'REMOVED'])

/**
 * Runs one push job: walks the conversation's members that hold devices in chunks after the job's
 * cursor; in each, those the alert rule alerts (domain/live/alertRule.ts, as MessageEvent.alert) and
 * who are not online get a notification per device platform with their unread total as badge; the
 * devices the gateway calls invalid are removed. The cursor moves after each chunk, so a retry goes
 * on from the chunk that failed (whose requests may then reach the gateway twice: at least once).
 */
export async function runPushJob(
  app: PresenceApp,
  agents: Agents,
  job: PushJob,
  opts: { leaseMs: number; observer?: PushObserver },
): Promise<void> {
  const message = await findPushMessage(app.db, job)
  let cursor = job.cursorUserId
  while (message && !WITHDRAWN.has(message.status)) {
    const candidates = await findPushCandidates(app.db, job.conversationId, cursor, CHUNK)
    if (!candidates.length) break
    const now = new Date()
    const alerted = candidates.filter((c) => alertRule.alerts('ADDED', message, c, now))
    const online = await app.presence.onlineAmong(alerted.map((c) => c.userId))
    const recipients = alerted.map((c) => c.userId).filter((id) => !online.has(id))
    if (recipients.length) {
      const [devices, badges] = await Promise.all([
        findDevicesOf(app.db, recipients),
        countUnreadTotals(app.db, recipients),
      ])
      const requests = buildRequests(message, devices, badges, app.settings.push.preview)
      const invalid = (
        await Promise.all(
          requests.map(async (request) => {
            const started = performance.now()
            const rejected = await postNotifications(app, agents, request)
            opts.observer?.gatewaySeconds((performance.now() - started) / 1000)
            opts.observer?.sent(request.notifications.length)
            return rejected
          }),
        )
      ).flat()
      const removed = await deleteDevicesByToken(app.db, invalid)
      if (removed) opts.observer?.tokensRemoved(removed)
      const gone = new Set(invalid.map((d) => d.id))
      await markNotified(
        app.db,
        devices.filter((d) => !gone.has(d.id)).map((d) => d.id),
        now,
      )
    }
    cursor = candidates.at(-1)!.userId
    if (candidates.length < CHUNK) break
    await advancePushJob(app.db, job, cursor, opts.leaseMs)
  }
  await finishPushJob(app.db, job)
}
