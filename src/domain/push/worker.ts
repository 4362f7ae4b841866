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
  const { log = console.error, pollMs = 100, concurrency = 8 } = opts
  const agents = createAgents()
  const inFlight = new Set<Promise<void>>()
  let stopped = false
  let claiming: Promise<void> | null = null
  let claimFailure: string | null = null

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

  function claim(): void {
    if (stopped || claiming || inFlight.size >= concurrency) return
    claiming = claimPushJobs(app.db, concurrency - inFlight.size, LEASE_MS)
      .then((jobs) => {
        claimFailure = null
        for (const job of jobs) {
          const running: Promise<void> = attempt(job)
            .catch((error: unknown) => log(`push job ${job.id} not recorded: ${String(error)}`))
            .finally(() => {
              inFlight.delete(running)
              claim()
            })
          inFlight.add(running)
        }
      })
      .catch((error: unknown) => {
        // Polled ten times a second: an outage is logged when it starts (or changes), not on every poll.
        const message = error instanceof Error ? error.message : String(error)
        if (message !== claimFailure) log(`push claim failed: ${message}`)
        claimFailure = message
      })
      .finally(() => (claiming = null))
  }

  const poll = setInterval(claim, pollMs)
  const sweep = setInterval(
    () =>
      void deleteOldPushJobs(app.db, FAILED_KEPT_MS).catch((error: unknown) =>
        log(`push sweep failed: ${String(error)}`),
      ),
    60_000,
  )
  claim()

  const worker: PushWorker = {
    async stop() {
      stopped = true
      clearInterval(poll)
      clearInterval(sweep)
      await claiming
      await Promise.all(inFlight)
      agents.http.destroy()
      agents.https.destroy()
    },
  }
  return worker
}
