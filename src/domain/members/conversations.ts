import { badInput, notFound } from '../core/errors.ts'
import { parseId } from '../core/ids.ts'
import type { Tx } from '../../db/client.ts'
import type { RealtimeEvent } from '../../realtime/events.ts'
import {
  addMembers,
  findConversationIdByPrivateKey,
  findConversationType,
  findMember,
  findSuccessor,
  insertConversation,
  markMemberLeft,
  setMemberRole as storeSetMemberRole,
  updateConversationTitle,
} from '../../store/conversations.ts'
import type { HistoryVisibility, MemberRecord, MemberRole } from '../../store/records.ts'
import { countExistingUsers } from '../../store/users.ts'
import { accessConversation, type MemberAccess } from '../policy/access.ts'
import { type App, type Viewer } from '../core/app.ts'
import { transact } from '../core/transact.ts'
import { LIMITS } from '../core/limits.ts'
import {
  checkActsOn,
  checkManagesMembers,
  checkSetsRole,
  checkSetsTitle,
  checkUnsubscribes,
  isOwner,
  requireOperator,
  roleChange,
} from '../policy/policy.ts'
import { writeSystemMessage } from '../send/systemMessages.ts'

function parseMemberIds(ids: readonly string[], viewer: Viewer): number[] {
  if (ids.length > LIMITS.membersPerCall) throw badInput(`at most ${LIMITS.membersPerCall} users per call`, 'userIds')
  return [...new Set(ids.map((id) => parseId(id, 'User')))].filter((id) => id !== viewer.userId)
}

async function requireUsersExist(tx: Tx, ids: number[]): Promise<void> {
  if (ids.length && (await countExistingUsers(tx, ids)) !== ids.length) throw notFound('User')
}

function checkTitle(title: string): string {
  const trimmed = title.trim()
  if (!trimmed || trimmed.length > LIMITS.titleLength)
    throw badInput(`title must be 1..${LIMITS.titleLength} characters`, 'title')
  return trimmed
}

/** One conversation per pair of users, also when both open it at the same moment (unique private_key). */
export async function openPrivateConversation(app: App, viewer: Viewer, userId: string): Promise<number> {
  const peerId = parseId(userId, 'User')
  if (peerId === viewer.userId) throw badInput('cannot open a private conversation with yourself', 'userId')
  const privateKey = [viewer.userId, peerId].sort((a, b) => a - b).join(':')
  const existing = await findConversationIdByPrivateKey(app.db, privateKey)
  if (existing) return existing
  return transact(app, async (tx) => {
    await requireUsersExist(tx, [peerId])
    const created = await insertConversation(tx, {
      type: 'PRIVATE',
      title: null,
      historyVisibility: 'SHARED',
      privateKey,
      createdById: viewer.userId,
    })
    // Lost the race: the other side's insert committed first (ON CONFLICT waited for it).
    if (!created) return { result: (await findConversationIdByPrivateKey(tx, privateKey))!, events: [] }
    const members = [viewer.userId, peerId]
    await addMembers(
      tx,
      created.id,
      members.map((id) => ({ userId: id, role: 'MEMBER' as const })),
      1,
    )
    return {
      result: created.id,
      events: members.map((id) => ({ type: 'joined' as const, conversationId: created.id, userId: id })),
    }
  })
}

export async function createGroup(
  app: App,
  viewer: Viewer,
  input: { title: string; memberIds: readonly string[]; historyVisibility?: HistoryVisibility | null },
): Promise<number> {
  const title = checkTitle(input.title)
  const memberIds = parseMemberIds(input.memberIds, viewer)
  return transact(app, async (tx) => {
    await requireUsersExist(tx, memberIds)
    const conversation = (await insertConversation(tx, {
      type: 'GROUP',
      title,
      historyVisibility: input.historyVisibility ?? 'JOINED',
      createdById: viewer.userId,
    }))!
    await addMembers(
      tx,
      conversation.id,
      [{ userId: viewer.userId, role: 'OWNER' }, ...memberIds.map((id) => ({ userId: id, role: 'MEMBER' as const }))],
      1,
    )
    const created = await writeSystemMessage(tx, conversation, {
      event: 'CONVERSATION_CREATED',
      actorId: viewer.userId,
      targetIds: memberIds,
      text: title,
    })
    const joined = [viewer.userId, ...memberIds].map((id) => ({
      type: 'joined' as const,
      conversationId: conversation.id,
      userId: id,
    }))
    return { result: conversation.id, events: [created, ...joined] }
  })
}

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
      events: [message, ...added.map((userId) => ({ type: 'joined' as const, conversationId: id, userId }))],
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
    return { result: id, events: [message, { type: 'removed', conversationId: id, userId: targetId }] }
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
    const events: RealtimeEvent[] = [{ type: 'removed', conversationId: id, userId: viewer.userId }]
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

/** Operators create channels; the creator is their OWNER. */
export async function createChannel(app: App, viewer: Viewer, title: string): Promise<number> {
  requireOperator(viewer, 'create channels')
  const checked = checkTitle(title)
  return transact(app, async (tx) => {
    const conversation = (await insertConversation(tx, {
      type: 'CHANNEL',
      title: checked,
      historyVisibility: 'SHARED',
      createdById: viewer.userId,
    }))!
    await addMembers(tx, conversation.id, [{ userId: viewer.userId, role: 'OWNER' }], 1)
    const created = await writeSystemMessage(tx, conversation, {
      event: 'CONVERSATION_CREATED',
      actorId: viewer.userId,
      targetIds: [],
      text: checked,
    })
    return {
      result: conversation.id,
      events: [created, { type: 'joined', conversationId: conversation.id, userId: viewer.userId }],
    }
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
    return { result: id, events: added.map((userId) => ({ type: 'joined' as const, conversationId: id, userId })) }
  })
}

export async function unsubscribeChannel(app: App, viewer: Viewer, conversationId: string): Promise<boolean> {
  const id = parseId(conversationId, 'Conversation')
  return transact(app, async (tx) => {
    const access = await accessConversation(tx, viewer, id, { lock: false })
    if (access.conversation.type !== 'CHANNEL') throw notFound('Channel')
    checkUnsubscribes(access)
    await markMemberLeft(tx, id, viewer.userId)
    return { result: true, events: [{ type: 'removed', conversationId: id, userId: viewer.userId }] }
  })
}

/**
 * OWNER and ADMIN rename a group or channel; the change is a TITLE_CHANGED system message carrying
 * the new title. Setting the current title again writes nothing.
 */
export async function setConversationTitle(
  app: App,
  viewer: Viewer,
  conversationId: string,
  title: string,
): Promise<number> {
  const id = parseId(conversationId, 'Conversation')
  const checked = checkTitle(title)
  return transact(app, async (tx) => {
    const access = await accessConversation(tx, viewer, id, { lock: true })
    checkSetsTitle(access)
    const { conversation } = access
    if (conversation.title === checked) return { result: id, events: [] }
    await updateConversationTitle(tx, id, checked)
    const message = await writeSystemMessage(tx, conversation, {
      event: 'TITLE_CHANGED',
      actorId: viewer.userId,
      targetIds: [],
      text: checked,
    })
    return { result: id, events: [message] }
  })
}
