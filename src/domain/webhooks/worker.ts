import type { App } from '../core/app.ts'
import { startLeasedWorker } from '../core/leasedWorker.ts'
import {
  claimDeliveries,
  recordAndLease,
  type AttemptResult,
  type ClaimedDelivery,
  type PostedDelivery,
} from '../../store/webhookDeliveries.ts'
import { deleteOldDeliveries, oldestPendingAgeSeconds } from '../../store/webhookDeliveryHistory.ts'
import { attemptDelivery } from './attempt.ts'
import { onDeliveriesCommitted } from './outbox.ts'
import { createAgents, ATTEMPT_TIMEOUT_MS, type Agents } from './post.ts'

/** Deliveries are kept this long, whatever became of them (Webhook.deliveries shows them until then). */
const RETENTION_MS = 7 * 24 * 3600 * 1000
/** A lease outlives an attempt's timeout by a margin, so only a dead worker's lease runs out. */
const LEASE_MS = ATTEMPT_TIMEOUT_MS * 6
/**
 * Deliveries of one queue a run holds leased ahead (decision 0289): what it posts while the records
 * of the ones before commit, and the most a crash sends again.
 */
const WINDOW = 8

/** What an attempt came to, for metrics (ops/metrics.ts). */
type DeliveryObserver = { attempted(outcome: AttemptResult['outcome'], seconds: number): void }

export type WebhookWorker = {
  /** Set by metrics (ops/metrics.ts#createMetrics). */
  observer?: DeliveryObserver
  stop(): Promise<void>
  oldestPendingAgeSeconds(): Promise<number>
}

/**
 * Delivers the outbox (decisions 0272, 0289): claims the due heads of queues (webhook, conversation)
 * and runs each queue from there. A run posts its deliveries one at a time in order; after a 2xx it
 * posts the next it holds while one statement records the last ones and leases more
 * (store/webhookDeliveries.ts#recordAndLease); anything but a 2xx ends the run, the rest held given
 * back. A committed change wakes the worker (outbox.ts#onDeliveriesCommitted); the poll catches
 * what another instance wrote. Any number of instances may run one.
 */
export function startWebhookWorker(
  app: App,
  opts: { log?: (message: string) => void; pollMs?: number; concurrency?: number } = {},
): WebhookWorker {
  const agents = createAgents()
  let stopping = false
  const leased = startLeasedWorker({
    name: 'webhook',
    log: opts.log ?? console.error,
    pollMs: opts.pollMs ?? 100,
    // Queues run at once: each holds one connection to a receiver at a time.
    concurrency: opts.concurrency ?? 64,
    claim: (limit) => claimDeliveries(app.db, limit, LEASE_MS),
    run: (first) => runQueue(app, agents, first, { stopping: () => stopping, observer: () => worker.observer }),
    sweep: () => deleteOldDeliveries(app.db, RETENTION_MS, 10_000),
    // Every commit with a delivery wakes the worker: under many senders one claim takes several.
    claimGapMs: 10,
  })
  const unsubscribe = onDeliveriesCommitted(leased.wake)
  const worker: WebhookWorker = {
    async stop() {
      stopping = true
      unsubscribe()
      await leased.stop()
      agents.http.destroy()
      agents.https.destroy()
    },
    oldestPendingAgeSeconds: () => oldestPendingAgeSeconds(app.db),
  }
  return worker
}

/** Runs one queue from its claimed head until it is empty, an attempt is not a 2xx, or the worker stops. */
async function runQueue(
  app: App,
  agents: Agents,
  first: ClaimedDelivery,
  ctl: { stopping(): boolean; observer(): DeliveryObserver | undefined },
): Promise<void> {
  const queue = { webhookId: first.webhookId, conversationId: first.conversationId }
  const held = [{ d: first, leasedAt: performance.now() }]
  let after = { pts: first.pts, id: first.id }
  let posted: PostedDelivery[] = []
  let ended = false
  const broken: { error?: Error } = {}

  async function step(): Promise<void> {
    const release = ended ? held.splice(0).map((h) => h.d.id) : []
    const count = ended ? 0 : WINDOW - held.length
    const batch = posted
    posted = []
    if (!batch.length && !release.length && !count) return
    const leasedAt = performance.now()
    const next = await recordAndLease(app.db, { posted: batch, release, queue, after, count, leaseMs: LEASE_MS })
    held.push(...next.map((d) => ({ d, leasedAt })))
    const last = next.at(-1)
    if (last) after = { pts: last.pts, id: last.id }
  }

  // One statement at a time; asked for while one runs, it runs once more with all that was posted meanwhile.
  let stepping: Promise<void> | null = null
  let asked = false
  async function steps(): Promise<void> {
    try {
      while (asked) {
        asked = false
        await step()
      }
    } finally {
      stepping = null
    }
  }
  const stepSoon = (): Promise<void> => {
    asked = true
    stepping ??= steps()
    return stepping
  }

  try {
    while (!ctl.stopping() && !broken.error) {
      if (!held.length) await stepSoon()
      const next = held[0]
      // Held so long its lease could run out in flight: leave it to a claim, which leases it afresh.
      if (!next || performance.now() - next.leasedAt > LEASE_MS - 2 * ATTEMPT_TIMEOUT_MS) break
      held.shift()
      const started = performance.now()
      const attempt = await attemptDelivery(app, agents, next.d)
      ctl.observer()?.attempted(attempt.result.outcome, (performance.now() - started) / 1000)
      posted.push(attempt)
      if (attempt.result.outcome !== 'delivered') break
      // Recorded while the next one is posted (steps one at a time: one records all posted meanwhile).
      // A failed record ends the run (its leases run out).
      void stepSoon().catch((error: unknown) => {
        broken.error = error instanceof Error ? error : new Error(String(error))
      })
    }
  } finally {
    ended = true
    await stepSoon()
  }
  if (broken.error) throw broken.error
}
