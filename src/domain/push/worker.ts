import { startLeasedWorker } from '../core/leasedWorker.ts'
import type { PresenceApp } from '../presence/presence.ts'
import { claimPushJobs, deleteOldPushJobs, failPushJob, type PushJob } from '../../store/pushJobs.ts'
import { createAgents } from './gateway.ts'
import { runPushJob, type PushObserver } from './job.ts'

/** A job's lease: long enough for a chunk's requests (each at most 10 s), renewed after each chunk. */
const LEASE_MS = 60_000
/** Failed jobs are kept this long for inspection. */
const FAILED_KEPT_MS = 7 * 24 * 3600 * 1000

export type PushWorker = {
  /** Set by metrics (ops/metrics.ts#createMetrics). */
  observer?: PushObserver
  stop(): Promise<void>
}

/**
 * Sends the push outbox (docs/push.md): claims due jobs and runs them; a job that fails (the gateway
 * answered other than 2xx, or not in time) is tried again after the next delay of the webhooks'
 * schedule (WEBHOOK_RETRY_SCHEDULE_MS, ±10%), and is kept as failed once it is used up. Any number
 * of instances may run one.
 */
export function startPushWorker(
  app: PresenceApp,
  opts: { log?: (message: string) => void; pollMs?: number; concurrency?: number } = {},
): PushWorker {
  const agents = createAgents()
  const leased = startLeasedWorker({
    name: 'push',
    log: opts.log ?? console.error,
    pollMs: opts.pollMs ?? 100,
    concurrency: opts.concurrency ?? 8,
    claim: (limit) => claimPushJobs(app.db, limit, LEASE_MS),
    run: (job) => attempt(job),
    sweep: () => deleteOldPushJobs(app.db, FAILED_KEPT_MS),
  })

  async function attempt(job: PushJob): Promise<void> {
    try {
      await runPushJob(app, agents, job, { leaseMs: LEASE_MS, observer: worker.observer })
    } catch (error) {
      worker.observer?.failed()
      const delay = app.settings.webhooks.retryScheduleMs[job.roundAttempts]
      const retryInMs = delay === undefined ? null : Math.round(delay * (0.9 + Math.random() * 0.2))
      await failPushJob(app.db, job, error instanceof Error ? error.message : String(error), retryInMs)
    }
  }

  const worker: PushWorker = {
    async stop() {
      await leased.stop()
      agents.http.destroy()
      agents.https.destroy()
    },
  }
  return worker
}
