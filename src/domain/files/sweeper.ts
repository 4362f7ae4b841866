import type { Tx } from '../../db/client.ts'
import { deleteAttachments, lockSweepable } from '../../store/attachments.ts'
import { transact } from '../core/transact.ts'
import type { FilesApp } from './app.ts'
import { attachmentKey, slotKey, thumbnailKey } from './uploads.ts'

/** An attachment no message carries is kept this long after completion (time to send it), then removed. */
const UNUSED_ATTACHMENT_MS = 24 * 60 * 60 * 1000
const BATCH = 100

/**
 * One pass of the sweeper: attachments completed more than a day ago that no message carries, and
 * slots never completed whose hour is over, are removed with their files. Several instances may
 * sweep at once: each locks its rows with SKIP LOCKED, so no two take the same; a send naming an
 * attachment holds a lock on its row (the foreign key), so the sweeper skips it. Files go before the
 * rows, inside the transaction: should the commit fail, the rows stay and the next pass removes them
 * (a missing file is no error), and no row ever outlives its file unnoticed. Returns how many went.
 */
export async function sweepAttachments(app: FilesApp): Promise<number> {
  const now = new Date()
  let removed = 0
  for (;;) {
    const swept = await transact(app, async (tx) => {
      const ids = await lockSweepable(tx, {
        usedBefore: new Date(now.getTime() - UNUSED_ATTACHMENT_MS),
        now,
        limit: BATCH,
      })
      await removeAttachments(app, tx, ids)
      return { result: ids, events: [] }
    })
    removed += swept.length
    if (swept.length < BATCH) return removed
  }
}

/**
 * Removes the attachments' files, then their rows in `tx` (locked by the caller): should the commit
 * fail, the rows stay and the next pass removes them (a missing file is no error).
 */
export async function removeAttachments(app: FilesApp, tx: Tx, ids: number[]): Promise<void> {
  if (!ids.length) return
  await app.media.remove(ids.flatMap((id) => [slotKey(id), attachmentKey(id), thumbnailKey(id)]))
  await deleteAttachments(tx, ids)
}

/** Sweeps every `intervalMs` (10 minutes by default) until stopped; a failed pass is logged and the next one tries again. */
export function startAttachmentSweeper(
  app: FilesApp,
  opts: { intervalMs?: number; log?: (message: string) => void } = {},
): { stop(): Promise<void> } {
  const { intervalMs = 10 * 60 * 1000, log = console.error } = opts
  let running: Promise<unknown> = Promise.resolve()
  const timer = setInterval(() => {
    running = sweepAttachments(app).catch((error: unknown) =>
      log(`attachment sweep failed: ${error instanceof Error ? error.message : String(error)}`),
    )
  }, intervalMs)
  timer.unref()
  return {
    async stop() {
      clearInterval(timer)
      await running
    },
  }
}
