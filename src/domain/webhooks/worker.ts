import { Webhook as Signer } from 'standardwebhooks'
import type { App } from '../core/app.ts'
import { encodeGlobalId } from '../core/ids.ts'
import {
  claimDeliveries,
  claimNextInQueue,
  deleteOldDeliveries,
  oldestPendingAgeSeconds,
  recordAttempt,
  type AttemptResult,
  type ClaimedDelivery,
} from '../../store/webhookDeliveries.ts'
import { renderBody } from './payload.ts'
import { createAgents, postWebhook, ATTEMPT_TIMEOUT_MS } from './post.ts'
import { decryptSecret } from './secrets.ts'

/** Deliveries are kept this long, whatever became of them (Webhook.deliveries shows them until then). */
const RETENTION_MS = 7 * 24 * 3600 * 1000
/** A lease outlives an attempt's timeout by a margin, so only a dead worker's lease runs out. */
const LEASE_MS = ATTEMPT_TIMEOUT_MS * 6

/** What an attempt came to, for metrics (ops/metrics.ts). */
type DeliveryObserver = { attempted(outcome: AttemptResult['outcome'], seconds: number): void }

export type WebhookWorker = {
  /** Set by metrics (ops/metrics.ts#createMetrics). */
  observer?: DeliveryObserver
  stop(): Promise<void>
  oldestPendingAgeSeconds(): Promise<number>
}

/** Retry after the next delay of the schedule, ±10% so receivers that failed together are not hit together. */
function retryOrFail(app: App, d: ClaimedDelivery, statusCode: number | null, error: string): AttemptResult {
  const delay = app.settings.webhooks.retryScheduleMs[d.roundAttempts]
  if (delay !== undefined)
    return { outcome: 'retry', statusCode, error, retryInMs: Math.round(delay * (0.9 + Math.random() * 0.2)) }
  const id = encodeGlobalId('WebhookDelivery', d.id)
  return {
    outcome: 'failed',
    statusCode,
    error,
    disableReason: `delivery ${id} failed after ${d.roundAttempts + 1} attempts: ${error}`,
  }
}

/**
 * Delivers the outbox (decision 0272): claims due deliveries (the head of each webhook and
 * conversation), POSTs each signed as Standard Webhooks asks, and records what came of it; a delivered
 * one leases the next of its queue at once (one index probe, so a long backlog drains at the
 * receiver's pace, not the claim's), anything else claims again, so nothing waits for the poll. Any
 * number of instances may run one.
 */
export function startWebhookWorker(
  app: App,
  opts: { log?: (message: string) => void; pollMs?: number; concurrency?: number } = {},
): WebhookWorker {
  const { log = console.error, pollMs = 100, concurrency = 64 } = opts
  const agents = createAgents()
  const inFlight = new Set<Promise<void>>()
  let stopped = false
  let pumping: Promise<void> | null = null
  let again = false
  let claimFailure: string | null = null

  async function attempt(d: ClaimedDelivery): Promise<AttemptResult['outcome']> {
    const started = performance.now()
    const body = d.body ?? renderBody(d)
    let result: AttemptResult
    try {
      const id = encodeGlobalId('WebhookDelivery', d.id)
      const now = new Date()
      const signer = new Signer(decryptSecret(app.settings.webhooks.secretKey, d.secret).slice('whsec_'.length))
      const headers = {
        'webhook-id': id,
        'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
        'webhook-signature': signer.sign(id, now, body),
        'user-agent': 'Parley-Webhooks',
      }
      const status = await postWebhook(d.url, headers, body, { rules: app.settings.webhooks, agents })
      if (status >= 200 && status < 300) result = { outcome: 'delivered', statusCode: status }
      else if (status === 410)
        result = {
          outcome: 'failed',
          statusCode: status,
          error: 'HTTP 410',
          disableReason: 'the receiver answered 410 Gone',
        }
      else result = retryOrFail(app, d, status, `HTTP ${status}`)
    } catch (error) {
      result = retryOrFail(app, d, null, error instanceof Error ? error.message : String(error))
    }
    await recordAttempt(app.db, d.id, body, result)
    worker.observer?.attempted(result.outcome, (performance.now() - started) / 1000)
    return result.outcome
  }

  /** Its queue's next delivery follows a delivered one at once; anything else leaves the queue to the claims. */
  async function follow(d: ClaimedDelivery, outcome: AttemptResult['outcome']): Promise<void> {
    const next = outcome === 'delivered' && !stopped ? await claimNextInQueue(app.db, d, LEASE_MS) : []
    if (next.length) next.forEach(track)
    else pump()
  }

  function track(d: ClaimedDelivery) {
    const running: Promise<void> = attempt(d)
      .then((outcome) => follow(d, outcome))
      .catch((error: unknown) => {
        log(`webhook delivery ${d.id}: ${String(error)}`)
        pump()
      })
      .finally(() => inFlight.delete(running))
    inFlight.add(running)
  }

  // One claim at a time per worker; a request for another while one runs makes it go round again.
  function pump(): void {
    if (stopped) return
    if (pumping) {
      again = true
      return
    }
    pumping = (async () => {
      do {
        again = false
        const room = concurrency - inFlight.size
        if (room <= 0) break
        const claimed = await claimDeliveries(app.db, room, LEASE_MS)
        claimed.forEach(track)
        if (claimed.length === room) again = true
      } while (again && !stopped)
    })()
      .then(() => {
        claimFailure = null
      })
      .catch((error: unknown) => {
        // Polled ten times a second: an outage is logged when it starts (or changes), not on every poll.
        const message = error instanceof Error ? error.message : String(error)
        if (message !== claimFailure) log(`webhook claim failed: ${message}`)
        claimFailure = message
      })
      .finally(() => {
        pumping = null
        // Asked for while the last round was finishing: go round once more.
        if (again) pump()
      })
  }

  const poll = setInterval(pump, pollMs)
  const sweep = setInterval(
    () =>
      void deleteOldDeliveries(app.db, RETENTION_MS, 10_000).catch((error: unknown) =>
        log(`webhook retention sweep failed: ${String(error)}`),
      ),
    60_000,
  )
  pump()

  const worker: WebhookWorker = {
    async stop() {
      stopped = true
      clearInterval(poll)
      clearInterval(sweep)
      await pumping
      await Promise.all(inFlight)
      agents.http.destroy()
      agents.https.destroy()
    },
    oldestPendingAgeSeconds: () => oldestPendingAgeSeconds(app.db),
  }
  return worker
}
