import { alertRule } from '../live/alertRule.ts'
import type { PresenceApp } from '../presence/presence.ts'
import { deleteDevicesByToken, findDevicesOf, markNotified } from '../../store/pushDevices.ts'
import { advancePushJob, finishPushJob, type PushJob } from '../../store/pushJobs.ts'
import { findPushCandidates, findPushMessage, type PushMessage } from '../../store/pushRecipients.ts'
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

type Chunk = { lastUserId: number; full: boolean; requests: ReturnType<typeof buildRequests>; at: Date }

/**
 * The next chunk of members holding devices after `afterUserId`: those the alert rule alerts
 * (domain/live/alertRule.ts, as MessageEvent.alert) and who are not online, with their devices and
 * their unread totals as badges, as gateway requests. Null when no member is left.
 */
async function readChunk(app: PresenceApp, message: PushMessage, afterUserId: number): Promise<Chunk | null> {
  const candidates = await findPushCandidates(app.db, message, afterUserId, CHUNK)
  if (!candidates.length) return null
  const at = new Date()
  const alerted = candidates.filter((c) => alertRule.alerts('ADDED', message, c, at))
  const online = await app.presence.onlineAmong(alerted.map((c) => c.userId))
  const recipients = alerted.map((c) => c.userId).filter((id) => !online.has(id))
  const [devices, badges] = recipients.length
    ? await Promise.all([findDevicesOf(app.db, recipients), countUnreadTotals(app.db, recipients)])
    : [[], new Map<number, number>()]
  return {
    lastUserId: candidates.at(-1)!.userId,
    full: candidates.length === CHUNK,
    requests: buildRequests(message, devices, badges, app.settings.push.preview),
    at,
  }
}

/**
 * Runs one push job: walks the conversation's members that hold devices in chunks after the job's
 * cursor (the next chunk is read while this one is sent), posts each chunk's requests, removes the
 * devices the gateway calls invalid, and moves the cursor, so a retry goes on from the chunk that
 * failed (whose requests may then reach the gateway twice: at least once).
 */
export async function runPushJob(
  app: PresenceApp,
  agents: Agents,
  job: PushJob,
  opts: { leaseMs: number; observer?: PushObserver },
): Promise<void> {
  const message = await findPushMessage(app.db, job)
  let next = message && !WITHDRAWN.has(message.status) ? readChunk(app, message, job.cursorUserId) : null
  while (next) {
    const chunk = await next
    if (!chunk) break
    next = chunk.full ? readChunk(app, message!, chunk.lastUserId) : null
    // Awaited in the next round, or dropped with this job's failure.
    next?.catch(() => {})
    const invalid = (
      await Promise.all(
        chunk.requests.map(async (request) => {
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
    const notified = chunk.requests.flatMap((r) => r.devices).filter((d) => !gone.has(d.id))
    await markNotified(
      app.db,
      notified.map((d) => d.id),
      chunk.at,
    )
    if (next) await advancePushJob(app.db, job, chunk.lastUserId, opts.leaseMs)
  }
  await finishPushJob(app.db, job)
}
