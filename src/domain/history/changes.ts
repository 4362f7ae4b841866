import { listChanges } from '../../store/changes.ts'
import type { ConversationRecord, MessageRecord } from '../../store/records.ts'
import type { App, Viewer } from '../core/app.ts'
import { position, windowSize } from '../core/input.ts'
import { LIMITS } from '../core/limits.ts'

export type ChangeBatch = { messages: MessageRecord[]; lastPts: number; hasMore: boolean }

/**
 * Conversation.changes: each message changed after sincePts once, in its latest state, ascending by
 * pts, as the viewer may see it. `conversation` must have been read before this scan: its lastPts
 * bounds the scan, and every pts up to a committed last_pts is committed (pts are taken under the
 * conversation row lock), so nothing is skipped even while writers commit meanwhile. Without more,
 * lastPts is that bound, so a client never re-scans changes it may not see.
 */
export async function listConversationChanges(
  app: App,
  viewer: Viewer,
  conversation: Pick<ConversationRecord, 'id' | 'lastPts'>,
  args: { sincePts: number; first?: number | null },
): Promise<ChangeBatch> {
  const first = windowSize(args.first, 'first', LIMITS.pageSize)
  const sincePts = position(args.sincePts, 'sincePts')
  const rows = await listChanges(app.db, viewer, conversation.id, {
    sincePts,
    limit: first + 1,
    untilPts: conversation.lastPts,
  })
  const hasMore = rows.length > first
  const messages = rows.slice(0, first)
  return { messages, hasMore, lastPts: hasMore ? messages.at(-1)!.pts : conversation.lastPts }
}
