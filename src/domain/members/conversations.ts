import { badInput, notFound } from '../core/errors.ts'
import { parseId } from '../core/ids.ts'
import type { Tx } from '../../db/client.ts'
import {
  findConversationIdByPrivateKey,
  insertConversation,
  updateConversationTitle,
  updatePostingPolicy,
} from '../../store/conversations.ts'
import { addMembers } from '../../store/members.ts'
import type { HistoryVisibility, PostingPolicy } from '../../store/records.ts'
import { countExistingUsers } from '../../store/users.ts'
import { accessConversation } from '../policy/access.ts'
import { type App, type Viewer } from '../core/app.ts'
import { transact, type Committed } from '../core/transact.ts'
import { findPrivatePeer } from '../../store/friendships.ts'
import { LIMITS } from '../core/limits.ts'
import { checkPrivateChat, checkSetsPostingPolicy, checkSetsTitle, requireOperator } from '../policy/policy.ts'
import { writeSystemMessage } from '../send/systemMessages.ts'

export function parseMemberIds(ids: readonly string[], viewer: Viewer): number[] {
  if (ids.length > LIMITS.membersPerCall) throw badInput(`at most ${LIMITS.membersPerCall} users per call`, 'userIds')
  return [...new Set(ids.map((id) => parseId(id, 'User')))].filter((id) => id !== viewer.userId)
}

export async function requireUsersExist(tx: Tx, ids: number[]): Promise<void> {
  if (ids.length && (await countExistingUsers(tx, ids)) !== ids.length) throw notFound('User')
}

function checkTitle(title: string): string {
  const trimmed = title.trim()
  if (!trimmed || trimmed.length > LIMITS.titleLength)
    throw badInput(`title must be 1..${LIMITS.titleLength} characters`, 'title')
  return trimmed
}

const privateKeyOf = (a: number, b: number) => [a, b].sort((x, y) => x - y).join(':')

/**
 * One conversation per pair of users, also when both open it at the same moment (unique private_key).
 * Under PRIVATE_CHAT_POLICY=friends only between friends (policy.ts checkPrivateChat).
 */
export async function openPrivateConversation(app: App, viewer: Viewer, userId: string): Promise<number> {
  const peerId = parseId(userId, 'User')
  if (peerId === viewer.userId) throw badInput('cannot open a private conversation with yourself', 'userId')
  if (app.settings.privateChatPolicy === 'friends') {
    const peer = await findPrivatePeer(app.db, viewer.userId, peerId)
    if (!peer) throw notFound('User')
    checkPrivateChat(app.settings.privateChatPolicy, viewer, peer)
  }
  const existing = await findConversationIdByPrivateKey(app.db, privateKeyOf(viewer.userId, peerId))
  if (existing) return existing
  return transact(app, async (tx) => {
    await requireUsersExist(tx, [peerId])
    return privateConversationIn(tx, viewer.userId, peerId)
  })
}

/** The pair's PRIVATE conversation in this transaction, created (with `creatorId` as creator) when there is none. */
export async function privateConversationIn(tx: Tx, creatorId: number, peerId: number): Promise<Committed<number>> {
  const privateKey = privateKeyOf(creatorId, peerId)
  const created = await insertConversation(tx, {
    type: 'PRIVATE',
    title: null,
    historyVisibility: 'SHARED',
    privateKey,
    createdById: creatorId,
  })
  // It exists, or lost the race: the other side's insert committed first (ON CONFLICT waited for it).
  if (!created) return { result: (await findConversationIdByPrivateKey(tx, privateKey))!, events: [] }
  const members = [creatorId, peerId]
  await addMembers(
    tx,
    created.id,
    members.map((id) => ({ userId: id, role: 'MEMBER' as const })),
    1,
  )
  return {
    result: created.id,
    events: members.map((id) => ({
      type: 'joined' as const,
      conversationId: created.id,
      userId: id,
      actorId: creatorId,
    })),
  }
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
      actorId: viewer.userId,
    }))
    return { result: conversation.id, events: [created, ...joined] }
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
      events: [
        created,
        { type: 'joined', conversationId: conversation.id, userId: viewer.userId, actorId: viewer.userId },
      ],
    }
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

const POLICY_NOTICE: Record<PostingPolicy, string> = {
  ADMINS: 'Only the owner and admins can post in this group now',
  EVERYONE: 'Everyone can post in this group again',
}

/**
 * setPostingPolicy (issue 45): a GROUP's OWNER or ADMIN makes it announcement-only (ADMINS) or open
 * again, under the conversation lock so no send slips past the change; members see a NOTICE.
 */
export async function setPostingPolicy(
  app: App,
  viewer: Viewer,
  conversationId: string,
  policy: PostingPolicy,
): Promise<number> {
  const id = parseId(conversationId, 'Conversation')
  return transact(app, async (tx) => {
    const access = await accessConversation(tx, viewer, id, { lock: true })
    checkSetsPostingPolicy(access)
    if (access.conversation.postingPolicy === policy) return { result: id, events: [] }
    await updatePostingPolicy(tx, id, policy)
    const notice = { event: 'NOTICE' as const, actorId: viewer.userId, targetIds: [], text: POLICY_NOTICE[policy] }
    return { result: id, events: [await writeSystemMessage(tx, access.conversation, notice)] }
  })
}
