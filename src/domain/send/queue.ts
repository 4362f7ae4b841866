import { DomainError } from '../core/errors.ts'
import { groupBy } from '../../lib/groupBy.ts'
import type { App } from '../core/app.ts'
import type { PreparedSend, SendMessageResult } from './prepare.ts'
import type { RateLimits } from '../rateLimits/rateLimits.ts'
import { commitSends, type SendOutcome } from './batch.ts'

type Waiter = { send: PreparedSend; resolve: (r: SendMessageResult) => void; reject: (e: unknown) => void }

/** Sends one shared transaction takes at most. */
const MAX_BATCH = 100
/**
 * Shared transactions in flight at once. Two: one commits while the next fills, and a send finding
 * the other slot free starts at once (a lone sender waits for nobody). Measured in bench scenario 1
 * against one and four (decision 0140).
 */
const MAX_RUNNING = 2

/**
 * Per app (App.sends): the sends waiting for a transaction, the conversations some transaction of this
 * process is writing to (their sends wait for it: they would only queue on its row lock), and how many
 * shared transactions are in flight.
 */
export type SendQueues = { pending: Waiter[]; busy: Set<number>; running: number; observer: SendObserver }

/** What the send queues report to the operator's metrics (ops/metrics.ts sets it; a no-op otherwise). */
type SendObserver = { committed(sends: number): void }

/** What a send asks of the App: this instance's queues and rate limits. */
export type SendApp = App & { sends: SendQueues; limits: RateLimits }

export const createSendQueues = (): SendQueues => ({
  pending: [],
  busy: new Set(),
  running: 0,
  observer: { committed() {} },
})

/**
 * Coalescing across conversations: a send commits at once when a transaction slot is free and no
 * transaction is writing to its conversation; otherwise it waits, and the next transaction takes up
 * to MAX_BATCH waiting sends, to as many conversations as they go to. One transaction (one lock
 * statement, one insert, one commit) per batch instead of one per message amortizes what each
 * transaction costs the process.
 */
export function enqueueSend(app: SendApp, send: PreparedSend): Promise<SendMessageResult> {
  return new Promise((resolve, reject) => {
    app.sends.pending.push({ send, resolve, reject })
    pump(app)
  })
}

/** Every send its own transaction, waiting for its conversation's lock (SEND_COALESCING=false). */
export function sendAlone(app: SendApp, send: PreparedSend): Promise<SendMessageResult> {
  return new Promise((resolve, reject) => void settle(app, [{ send, resolve, reject }], true))
}

function pump(app: SendApp): void {
  const queues = app.sends
  while (queues.running < MAX_RUNNING) {
    const batch = takeBatch(queues)
    if (!batch.length) return
    queues.running++
    void runBatch(app, batch)
  }
}

/** The first MAX_BATCH waiting sends, in arrival order, whose conversations no transaction is writing to. */
function takeBatch(queues: SendQueues): Waiter[] {
  const batch: Waiter[] = []
  const rest: Waiter[] = []
  for (const waiter of queues.pending)
    (batch.length < MAX_BATCH && !queues.busy.has(waiter.send.conversationId) ? batch : rest).push(waiter)
  queues.pending = rest
  for (const waiter of batch) queues.busy.add(waiter.send.conversationId)
  return batch
}

/**
 * One shared transaction; then the conversations it found locked by another transaction get one
 * waiting transaction each, outside the slots, so a lock held elsewhere delays only its own sends.
 */
async function runBatch(app: SendApp, batch: Waiter[]): Promise<void> {
  const queues = app.sends
  const deferred = await settle(app, batch, false)
  const waiting = groupBy(deferred, (w) => w.send.conversationId)
  queues.running--
  for (const waiter of batch)
    if (!waiting.has(waiter.send.conversationId)) queues.busy.delete(waiter.send.conversationId)
  pump(app)
  await Promise.all(
    [...waiting].map(async ([conversationId, waiters]) => {
      await settle(app, waiters, true)
      queues.busy.delete(conversationId)
      pump(app)
    }),
  )
}

/**
 * Commits `batch` in one transaction and settles each waiter with its own outcome; returns the
 * waiters deferred (their conversation locked elsewhere; only without `wait`). Never throws.
 */
async function settle(app: SendApp, batch: Waiter[], wait: boolean): Promise<Waiter[]> {
  let outcomes: SendOutcome[]
  try {
    outcomes = await commitSends(
      app,
      batch.map((w) => w.send),
      { wait },
    )
  } catch (error) {
    if (batch.length === 1) return (batch[0]!.reject(error), [])
    // Something broke the shared transaction: settle each send alone, so only its own send fails.
    const deferred: Waiter[] = []
    for (const waiter of batch) deferred.push(...(await settle(app, [waiter], wait)))
    return deferred
  }
  const committed = outcomes.filter((o) => o !== 'deferred').length
  // Counted once committed: a batch that falls back to one-by-one counts as the singles that commit.
  if (committed) app.sends.observer.committed(committed)
  const result = (i: number): Exclude<SendOutcome, { sameAs: number }> => {
    const outcome = outcomes[i]!
    return typeof outcome === 'object' && 'sameAs' in outcome
      ? { ...(result(outcome.sameAs) as SendMessageResult), deduplicated: true }
      : outcome
  }
  const deferred: Waiter[] = []
  batch.forEach((waiter, i) => {
    const outcome = result(i)
    if (outcome === 'deferred') deferred.push(waiter)
    else if (outcome instanceof DomainError) waiter.reject(outcome)
    else waiter.resolve(outcome)
  })
  return deferred
}
