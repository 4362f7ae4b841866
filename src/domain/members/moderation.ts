import { badInput, notFound } from '../core/errors.ts'
import { parseId } from '../core/ids.ts'
import { deleteBlock, insertBlock } from '../../store/blocks.ts'
import { setMemberMutedUntil } from '../../store/members.ts'
import type { MemberRecord } from '../../store/records.ts'
import { accessConversation } from '../policy/access.ts'
import { type App, type Viewer } from '../core/app.ts'
import { transact } from '../core/transact.ts'
import { requireManageableMember } from './membership.ts'
import { writeSystemMessage } from '../send/systemMessages.ts'
import { isMuted } from '../policy/policy.ts'
import { dropPendingRequest } from '../friends/friendship.ts'

function otherUser(viewer: Viewer, userId: string, what: string): number {
  const id = parseId(userId, 'User')
  if (id === viewer.userId) throw badInput(`you cannot ${what} yourself`, 'userId')
  return id
}

/**
 * The blocked user can no longer send to the blocker in their private conversation (BLOCKED), nor
 * ask either of them for friendship; a pending request between them is dropped. Idempotent.
 */
export async function blockUser(app: App, viewer: Viewer, userId: string): Promise<boolean> {
  const blockedId = otherUser(viewer, userId, 'block')
  return transact(app, async (tx) => {
    const events = await dropPendingRequest(tx, viewer.userId, blockedId)
    if (!(await insertBlock(tx, viewer.userId, blockedId))) throw notFound('User')
    return { result: true, events }
  })
}

/** Idempotent: unblocking someone who is not blocked is fine. */
export async function unblockUser(app: App, viewer: Viewer, userId: string): Promise<boolean> {
  await deleteBlock(app.db, viewer.userId, otherUser(viewer, userId, 'unblock'))
  return true
}

/**
 * A group manager mutes a member below them until a time (null lifts the mute), as for removal.
 * Each change is a MEMBER_MUTED system message whose text is the end time (ISO-8601), or null when
 * the mute is lifted. Lifting a mute that is not in force writes nothing.
 */
export async function muteMember(
  app: App,
  viewer: Viewer,
  conversationId: string,
  userId: string,
  until: Date | null,
): Promise<MemberRecord> {
  const id = parseId(conversationId, 'Conversation')
  const targetId = otherUser(viewer, userId, 'mute')
  const now = new Date()
  if (until && until <= now) throw badInput('until must be in the future; pass null to unmute', 'until')
  return transact(app, async (tx) => {
    const access = await accessConversation(tx, viewer, id, { lock: true })
    const target = await requireManageableMember(tx, access, targetId, 'mute')
    if (!until && !isMuted(target, now)) return { result: target, events: [] }
    const updated = (await setMemberMutedUntil(tx, id, targetId, until))!
    const message = await writeSystemMessage(tx, access.conversation, {
      event: 'MEMBER_MUTED',
      actorId: viewer.userId,
      targetIds: [targetId],
      text: until?.toISOString() ?? null,
    })
    return { result: updated, events: [message] }
  })
}
