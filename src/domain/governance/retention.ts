import type { RealtimeEvent } from '../../realtime/events.ts'
import {
  currentMemberIds,
  deleteExpiredBatch,
  findExpiredConversations,
  lockForSweep,
  lockUncarriedAttachments,
} from '../../store/retention.ts'
import { transact } from '../core/transact.ts'
import type { FilesApp } from '../files/app.ts'
import { removeAttachments } from '../files/sweeper.ts'

/** Messages one transaction deletes at most: the conversation's lock is held for one batch only. */
const SWEEP_BATCH = 500
/** Conversations one look-up names. */
const CONVERSATIONS_PER_PAGE = 100

/** Tells a conversation's current members its retainedFromSeq moved (ConversationUpdatedEvent, account streams). */
export const conversationUpdatedForMembers = (conversationId: number, userIds: number[]): RealtimeEvent[] =>
  userIds.map((userId) => ({ type: 'conversationUpdated', userId, conversationId }))

/**
 * One batch of one conversation in its own short transaction: null when another instance's sweeper
 * holds the conversation (its turn), or nothing had expired. A batch may delete nothing yet move
 * retainedFromSeq (it only erased thread roots whose replies are kept): the sweep goes on.
 */
async function sweepBatch(app: FilesApp, conversationId: number, batch: number) {
  return transact(app, async (tx) => {
    const swept = await lockForSweep(tx, conversationId, app.settings.retention.defaultSeconds)
    if (!swept || swept.retainedFromSeq > swept.lastSeq) return { result: null, events: [] }
    const done = await deleteExpiredBatch(tx, conversationId, swept, batch)
    return { result: done.advanced ? done : null, events: [] }
  })
}

/**
 * Removes the files and rows of attachments the swept messages carried that no kept message
 * carries any more (their uploader loses them too: retention is the company's rule, not the
 * uploader's).
 */
async function removeUncarried(app: FilesApp, ids: number[]): Promise<void> {
  if (!ids.length) return
  await transact(app, async (tx) => {
    await removeAttachments(app, tx, await lockUncarriedAttachments(tx, ids))
    return { result: null, events: [] }
  })
}

/**
 * One pass of the retention sweeper: every conversation whose oldest message expired loses its
 * expired messages, batch after batch, each batch in a short transaction of its own under the
 * conversation's row lock (sends wait for one batch at most) and an advisory lock that tells other
 * instances' sweepers to move on to other conversations, so any number of instances may sweep at
 * once and each message is deleted once. Members hear of it once per conversation. Returns how
 * many messages went.
 */
export async function sweepRetention(app: FilesApp, batch = SWEEP_BATCH): Promise<number> {
  const { defaultSeconds } = app.settings.retention
  let total = 0
  for (let afterId = 0; ;) {
    const ids = await findExpiredConversations(app.db, { defaultSeconds, afterId, limit: CONVERSATIONS_PER_PAGE })
    for (const conversationId of ids) {
      let moved = false
      for (
        let done = await sweepBatch(app, conversationId, batch);
        done;
        done = await sweepBatch(app, conversationId, batch)
      ) {
        moved = true
        total += done.deleted
        await removeUncarried(app, done.attachmentIds)
      }
      if (!moved) continue
      void app.realtime.publish(
        conversationUpdatedForMembers(conversationId, await currentMemberIds(app.db, conversationId)),
      )
    }
    if (ids.length < CONVERSATIONS_PER_PAGE) return total
    afterId = ids.at(-1)!
  }
}

/** Sweeps every RETENTION_SWEEP_INTERVAL_MS until stopped; a failed pass is logged and the next one tries again. */
export function startRetentionSweeper(
  app: FilesApp,
  opts: { log?: (message: string) => void } = {},
): { stop(): Promise<void> } {
  const { log = console.error } = opts
  let running: Promise<unknown> | null = null
  const timer = setInterval(() => {
    // One pass at a time in a process: a long pass is not overtaken by the next tick.
    running ??= sweepRetention(app)
      .catch((error: unknown) =>
        log(`retention sweep failed: ${error instanceof Error ? error.message : String(error)}`),
      )
      .finally(() => (running = null))
  }, app.settings.retention.sweepIntervalMs)
  timer.unref()
  return {
    async stop() {
      clearInterval(timer)
      await running
    },
  }
}
