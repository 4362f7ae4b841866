import type { Tx } from '../../db/client.ts'
import type { RealtimeEvent } from '../../realtime/events.ts'
import { enqueuePushJobs } from '../../store/pushJobs.ts'

/**
 * The push half of a transaction's outbox (beside the webhooks', domain/core/transact.ts): one job
 * per ADDED message (a streamed one when its stream ends: STREAM_ENDED), whoever its audience, so a
 * send writes one row and fans out nothing; the job
 * resolves its recipients when it runs. Nothing is sent for a rolled-back send, and a committed one
 * is pushed even when the process dies right after the commit.
 */
export async function recordPushJobs(tx: Tx, events: readonly RealtimeEvent[]): Promise<void> {
  const added = events.flatMap((e) =>
    e.type === 'message' && (e.kind === 'ADDED' || e.kind === 'STREAM_ENDED') ? [e] : [],
  )
  if (added.length) await enqueuePushJobs(tx, added)
}
