import type { Tx } from '../../db/client.ts'
import type { ConversationAccess } from '../../store/conversations.ts'
import { findConversationsForUser } from '../../store/conversations.ts'
import { lockConversation } from '../../store/conversationLocks.ts'
import { purgeKeptRecalls } from '../../store/lifecycle.ts'
import { currentMemberIds, updateLegalHold, updateRetention } from '../../store/retention.ts'
import type { App, Viewer } from '../core/app.ts'
import { badInput } from '../core/errors.ts'
import { parseId } from '../core/ids.ts'
import { transact } from '../core/transact.ts'
import { checkSetsRetention, requireMemberOrOperator, requireOperator } from '../policy/policy.ts'
import { recordAudit } from './audit.ts'
import { conversationUpdatedForMembers } from './retention.ts'

/**
 * Changes a conversation's governance setting under its lock (a sweep of it waits or skips it),
 * audited, and tells its members (ConversationUpdatedEvent; account sync through the row's trigger).
 * `change` writes it and returns whether anything changed.
 */
async function changeRule(
  app: App,
  viewer: Viewer,
  conversationId: string,
  audit: { action: string; detail: unknown },
  change: (tx: Tx, access: ConversationAccess) => Promise<boolean>,
): Promise<ConversationAccess> {
  const id = parseId(conversationId, 'Conversation')
  return transact(app, async (tx) => {
    const access = requireMemberOrOperator(await lockConversation(tx, id, viewer.userId), viewer)
    if (!(await change(tx, access))) return { result: access, events: [] }
    await recordAudit(tx, viewer, audit.action, conversationId, audit.detail)
    const [updated] = await findConversationsForUser(tx, [id], viewer.userId)
    return { result: updated!, events: conversationUpdatedForMembers(id, await currentMemberIds(tx, id)) }
  })
}

/**
 * setRetention: a GROUP's OWNER or an operator sets how long the conversation keeps messages (at
 * least RETENTION_MIN_SECONDS), or null for the server default. The next sweep applies it.
 */
export function setRetention(
  app: App,
  viewer: Viewer,
  conversationId: string,
  seconds: number | null,
): Promise<ConversationAccess> {
  const { minSeconds } = app.settings.retention
  if (seconds !== null && !(Number.isSafeInteger(seconds) && seconds >= minSeconds))
    throw badInput(`seconds must be at least ${minSeconds}, or null for the server default`, 'seconds')
  return changeRule(
    app,
    viewer,
    conversationId,
    { action: 'retention.set', detail: { seconds } },
    async (tx, access) => {
      checkSetsRetention(viewer, access)
      if (access.conversation.retentionSeconds === seconds) return false
      await updateRetention(tx, access.conversation.id, seconds)
      return true
    },
  )
}

/**
 * setLegalHold (operators): while held, nothing of the conversation is swept and recalls and
 * removals erase nothing (members still see tombstones). Lifting the hold erases what recalls kept.
 */
export function setLegalHold(
  app: App,
  viewer: Viewer,
  conversationId: string,
  hold: boolean,
): Promise<ConversationAccess> {
  requireOperator(viewer, 'set legal holds')
  return changeRule(app, viewer, conversationId, { action: 'legalHold.set', detail: { hold } }, async (tx, access) => {
    if (access.conversation.legalHold === hold) return false
    await updateLegalHold(tx, access.conversation.id, hold)
    if (!hold) await purgeKeptRecalls(tx, access.conversation.id)
    return true
  })
}
