import { badInput, notFound } from '../core/errors.ts'
import { parseId } from '../core/ids.ts'
import type { Tx } from '../../db/client.ts'
import type { RealtimeEvent } from '../../realtime/events.ts'
import { findConversationType } from '../../store/conversations.ts'
import {
  addMembers,
  findMember,
  findSuccessor,
  markMemberLeft,
  setMemberRole as storeSetMemberRole,
} from '../../store/members.ts'
import type { MemberRecord, MemberRole } from '../../store/records.ts'
import { accessConversation, type MemberAccess } from '../policy/access.ts'
import { type App, type Viewer } from '../core/app.ts'
import { transact } from '../core/transact.ts'
import {
  checkActsOn,
  checkManagesMembers,
  checkSetsRole,
  checkUnsubscribes,
  isOwner,
  roleChange,
} from '../policy/policy.ts'
import { writeSystemMessage } from '../send/systemMessages.ts'
import { parseMemberIds, requireUsersExist } from './conversations.ts'

/** Who is in a conversation: adding, removing and leaving, roles, and channel subscriptions. */

/** OWNER and ADMIN add members; JOINED history means the newcomers see from the "added" message on. */
export async function addGroupMembers(
  app: App,
  viewer: Viewer,
  conversationId: string,
  userIds: readonly string[],
): Promise<number> {
  const id = parseId(conversationId, 'Conversation')
  const newIds = parseMemberIds(userIds, viewer)
  if (!newIds.length) throw badInput('userIds must name at least one other user', 'userIds')
  return transact(app, async (tx) => {
    const access = await accessConversation(tx, viewer, id, { lock: true })
    checkManagesMembers(access, 'add')
    await requireUsersExist(tx, newIds)
    const { conversation } = access
    const visibleFromSeq = conversation.historyVisibility === 'JOINED' ? conversation.lastSeq + 1 : 1
    const added = await addMembers(
      tx,
      id,
      newIds.map((userId) => ({ userId, role: 'MEMBER' as const })),
      visibleFromSeq,
    )
    if (!added.length) return { result: id, events: [] }
    const message = await writeSystemMessage(tx, conversation, {
      event: 'MEMBERS_ADDED',
      actorId: viewer.userId,
      targetIds: added,
      text: null,
    })
    return {
      result: id,
      events: [
        message,
        ...added.map((userId) => ({ type: 'joined' as const, conversationId: id, userId, actorId: viewer.userId })),
      ],
    }
  })
}

/** A current group member the viewer may remove or mute (policy: a manager above them). */
export async function requireManageableMember(
  tx: Tx,
  access: MemberAccess,
  targetId: number,
  doing: 'remove' | 'mute',
): Promise<MemberRecord> {
  checkManagesMembers(access, doing)
  const target = await findMember(tx, access.conversation.id, targetId)
  if (!target) throw notFound('Member')
  checkActsOn(access.member, target, doing)
  return target
}

/** The OWNER removes anyone else; an ADMIN removes plain members only. */
export async function removeGroupMember(
  app: App,
  viewer: Viewer,
  conversationId: string,
  userId: string,
): Promise<number> {
  const id = parseId(conversationId, 'Conversation')
  const targetId = parseId(userId, 'User')
  if (targetId === viewer.userId) throw badInput('use leaveConversation to leave', 'userId')
  return transact(app, async (tx) => {
    const access = await accessConversation(tx, viewer, id, { lock: true })
    await requireManageableMember(tx, access, targetId, 'remove')
    await markMemberLeft(tx, id, targetId)
    const message = await writeSystemMessage(tx, access.conversation, {
      event: 'MEMBER_REMOVED',
      actorId: viewer.userId,
      targetIds: [targetId],
      text: null,
    })
    return {
      result: id,
      events: [message, { type: 'removed', conversationId: id, userId: targetId, actorId: viewer.userId }],
    }
  })
}

/**
 * Leaving a group writes MEMBER_LEFT; an owner who leaves hands the group to the longest-standing
 * admin, else the longest-standing member. Leaving a channel is unsubscribing. A private
 * conversation cannot be left.
 */
export async function leaveConversation(app: App, viewer: Viewer, conversationId: string): Promise<boolean> {
  const id = parseId(conversationId, 'Conversation')
  return transact(app, async (tx) => {
    const access = await accessConversation(tx, viewer, id, { lock: true })
    const { conversation, member } = access
    if (conversation.type === 'PRIVATE') throw badInput('a private conversation cannot be left', 'conversationId')
    const events: RealtimeEvent[] = [
      { type: 'removed', conversationId: id, userId: viewer.userId, actorId: viewer.userId },
    ]
    if (isOwner(member)) {
      const successor = await findSuccessor(tx, id, viewer.userId)
      if (conversation.type === 'CHANNEL' && successor === null)
        throw badInput('the owner cannot leave a channel with nobody to take over', 'conversationId')
      if (successor !== null) await storeSetMemberRole(tx, id, successor, 'OWNER')
    }
    await markMemberLeft(tx, id, viewer.userId)
    if (conversation.type === 'GROUP') {
      events.unshift(
        await writeSystemMessage(tx, conversation, {
          event: 'MEMBER_LEFT',
          actorId: viewer.userId,
          targetIds: [],
          text: null,
        }),
      )
    }
    return { result: true, events }
  })
}

/**
 * Only the OWNER changes roles. Making someone else OWNER transfers ownership: the old owner
 * becomes ADMIN. Groups use OWNER/ADMIN/MEMBER, channels OWNER/ADMIN/SUBSCRIBER.
 */
export async function setMemberRole(
  app: App,
  viewer: Viewer,
  conversationId: string,
  userId: string,
  role: MemberRole,
): Promise<MemberRecord> {
  const id = parseId(conversationId, 'Conversation')
  const targetId = parseId(userId, 'User')
  if (targetId === viewer.userId) throw badInput('cannot change your own role', 'userId')
  return transact(app, async (tx) => {
    const access = await accessConversation(tx, viewer, id, { lock: true })
    checkSetsRole(access, role)
    const target = await findMember(tx, id, targetId)
    if (!target) throw notFound('Member')
    const change = roleChange(target, role)
    if (change === 'none') return { result: target, events: [] }
    const updated = (await storeSetMemberRole(tx, id, targetId, role))!
    if (change === 'transfer') await storeSetMemberRole(tx, id, viewer.userId, 'ADMIN')
    const message = await writeSystemMessage(tx, access.conversation, {
      event: 'ROLE_CHANGED',
      actorId: viewer.userId,
      targetIds: [targetId],
      text: role,
    })
    return { result: updated, events: [message] }
  })
}

/**
 * Anyone may subscribe to a channel (channels are public by id); subscribers see its whole history.
 * No SYSTEM message: a channel's history is its posts, not its audience.
 */
export async function subscribeChannel(app: App, viewer: Viewer, conversationId: string): Promise<number> {
  const id = parseId(conversationId, 'Conversation')
  return transact(app, async (tx) => {
    if ((await findConversationType(tx, id)) !== 'CHANNEL') throw notFound('Channel')
    const added = await addMembers(tx, id, [{ userId: viewer.userId, role: 'SUBSCRIBER' }], 1)
    return {
      result: id,
      events: added.map((userId) => ({ type: 'joined' as const, conversationId: id, userId, actorId: userId })),
    }
  })
}

export async function unsubscribeChannel(app: App, viewer: Viewer, conversationId: string): Promise<boolean> {
  const id = parseId(conversationId, 'Conversation')
  return transact(app, async (tx) => {
    const access = await accessConversation(tx, viewer, id, { lock: false })
    if (access.conversation.type !== 'CHANNEL') throw notFound('Channel')
    checkUnsubscribes(access)
    await markMemberLeft(tx, id, viewer.userId)
    return {
      result: true,
      events: [{ type: 'removed', conversationId: id, userId: viewer.userId, actorId: viewer.userId }],
    }
  })
}
