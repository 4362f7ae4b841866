import { lockConversation } from '../../store/conversationLocks.ts'
import { findMessage, markRecalled } from '../../store/lifecycle.ts'
import type { MessageRecord } from '../../store/records.ts'
import type { App, Viewer } from '../core/app.ts'
import { badInput, notFound } from '../core/errors.ts'
import { parseMessageId } from '../core/ids.ts'
import { LIMITS } from '../core/limits.ts'
import { transact } from '../core/transact.ts'
import { changed } from '../lifecycle/lifecycle.ts'
import { isRecalled, requireOperator } from '../policy/policy.ts'
import { recordAudit } from './audit.ts'

/**
 * removeMessage (operators): a takedown. The message becomes a tombstone with status REMOVED and the
 * next pts, erased like a recall (kept for operators under a legal hold), and is delivered as a
 * RECALLED MessageEvent and a message.recalled webhook; its attachments stop being granted with it.
 * The reason goes to the audit entry. A message already recalled or removed stays as it is.
 */
export async function removeMessage(
  app: App,
  viewer: Viewer,
  messageId: string,
  reason: string,
): Promise<MessageRecord> {
  requireOperator(viewer, 'remove messages')
  const key = parseMessageId(messageId)
  if (!reason.trim() || reason.length > LIMITS.reportReasonLength)
    throw badInput(`reason must be 1..${LIMITS.reportReasonLength} characters and not only spaces`, 'reason')
  return transact(app, async (tx) => {
    const access = await lockConversation(tx, key.conversationId, viewer.userId)
    const message = access && (await findMessage(tx, key))
    if (!message) throw notFound('Message')
    if (isRecalled(message)) return { result: message, events: [] }
    const removed = await markRecalled(tx, key, {
      pts: access.conversation.lastPts + 1,
      recalledById: viewer.userId,
      sentWithinSeconds: null,
      purge: !access.conversation.legalHold,
      removed: true,
    })
    await recordAudit(tx, viewer, 'message.remove', messageId, { reason })
    return changed(removed!, 'RECALLED', viewer.userId)
  })
}
