import { DomainError, badInput, forbidden, notFound } from '../core/errors.ts'
import type { ConversationAccess } from '../../store/conversations.ts'
import type {
  ConversationType,
  MemberRecord,
  MemberRole,
  MessageKind,
  MessageRecord,
  UserKind,
} from '../../store/records.ts'
import type { Settings } from '../core/settings.ts'
import type { ViewerState } from '../../store/userActions.ts'
import type { MemberAccess } from './access.ts'
import type { Viewer } from '../core/app.ts'

/**
 * Who may do what to whom, and what a recall hides: pure functions of rows the action already read
 * (under the conversation lock where it writes). Actions and the resolvers that carry a rule call
 * these; no other code compares roles to decide, and the one ordering by role (the owner's successor,
 * store/members.ts findSuccessor) prefers admins as this hierarchy does (docs/architecture.md).
 *
 * One hierarchy (decision 0011): OWNER above ADMIN above everyone else. A manager (OWNER or ADMIN)
 * acts on members it outranks: the OWNER on anyone else, an ADMIN on plain members only.
 */

const RANK: Record<MemberRole, number> = { OWNER: 2, ADMIN: 1, MEMBER: 0, SUBSCRIBER: 0 }

type Role = Pick<MemberRecord, 'role'>

const isManager = (member: Role) => RANK[member.role] > 0
export const isOwner = (member: Role) => member.role === 'OWNER'
/** `target` null: not a current member (left), which ranks like a plain member. */
const outranks = (actor: Role, target: MemberRole | null) => RANK[actor.role] > RANK[target ?? 'MEMBER']

export const isMuted = (member: Pick<MemberRecord, 'mutedUntil'>, now: Date) =>
  member.mutedUntil !== null && member.mutedUntil > now

export const isSender = (message: Pick<MessageRecord, 'senderType' | 'senderId'>, viewer: Viewer) =>
  message.senderType !== 'SYSTEM' && message.senderId === viewer.userId

export function requireOperator(viewer: Viewer, doing: string): void {
  if (!viewer.isOperator) throw forbidden(`only operators ${doing}`)
}

function requireGroup(access: MemberAccess): void {
  if (access.conversation.type !== 'GROUP') throw badInput('this works on groups only', 'conversationId')
}

/**
 * The rules a send (and an edit, which is a send of new text) passes before anything is written
 * (docs/messages.md "Who may send"): channel posting, mute, block, @all.
 */
export function checkSender(
  viewer: Viewer,
  access: MemberAccess,
  opts: { mentionAll: boolean; now: Date; blockedByPeer: boolean },
): void {
  const { conversation, member } = access
  if (conversation.type === 'CHANNEL' && !isManager(member) && !viewer.isOperator) {
    throw forbidden('only the owner, an admin or an operator posts in a channel')
  }
  if (conversation.postingPolicy === 'ADMINS' && !isManager(member)) {
    throw forbidden('this is an announcement group: only the owner and admins post here')
  }
  if (isMuted(member, opts.now)) {
    const until = member.mutedUntil!.toISOString()
    throw new DomainError('SENDER_MUTED', `you are muted here until ${until}`, { mutedUntil: until })
  }
  if (opts.blockedByPeer) throw new DomainError('BLOCKED', 'this user does not accept your messages')
  if (opts.mentionAll && !isManager(member)) throw forbidden('only the owner or an admin can mention everyone')
}

/** The other participant of a private conversation, as PRIVATE_CHAT_POLICY needs it. */
export type PrivatePeer = { kind: UserKind; friends: boolean }

/**
 * PRIVATE_CHAT_POLICY (decision 0275): with `friends`, opening or sending into a private conversation
 * needs the two users to be friends. Operators are exempt (the host system speaks to anyone), and so
 * is a conversation with an AGENT on either side (a bot is not befriended). Checked after blocks:
 * a block answers BLOCKED whatever the friendship.
 */
export function checkPrivateChat(policy: Settings['privateChatPolicy'], viewer: Viewer, peer: PrivatePeer): void {
  if (policy === 'open' || viewer.isOperator || viewer.kind === 'AGENT' || peer.kind === 'AGENT' || peer.friends) return
  throw new DomainError('NOT_FRIENDS', 'private chats are between friends here: ask for friendship first')
}

/** Adding members, and the first half of removing or muting one (before the target is read). */
export function checkManagesMembers(access: MemberAccess, doing: 'add' | 'remove' | 'mute'): void {
  requireGroup(access)
  if (!isManager(access.member)) throw forbidden(`only the owner or an admin can ${doing} members`)
}

/** The second half: the target must rank below the actor. */
export function checkActsOn(actor: Role, target: Role, doing: 'remove' | 'mute'): void {
  if (!outranks(actor, target.role)) throw forbidden(`an admin can ${doing} plain members only`)
}

export function checkSetsTitle(access: MemberAccess): void {
  if (access.conversation.type === 'PRIVATE') throw badInput('a private conversation has no title', 'conversationId')
  if (!isManager(access.member)) throw forbidden('only the owner or an admin can change the title')
}

/** setPostingPolicy: groups only (BAD_USER_INPUT elsewhere), by their OWNER or an ADMIN. */
export function checkSetsPostingPolicy(access: MemberAccess): void {
  if (access.conversation.type !== 'GROUP') throw badInput('only a group has a posting policy', 'conversationId')
  if (!isManager(access.member)) throw forbidden('only the owner or an admin can change who posts')
}

/** setRetention: operators on any conversation; otherwise a GROUP's OWNER only (NOT_FOUND to non-members first). */
export function checkSetsRetention(viewer: Viewer, access: ConversationAccess): void {
  if (viewer.isOperator) return
  if (access.conversation.type !== 'GROUP' || access.member?.role !== 'OWNER')
    throw forbidden("only a group's owner or an operator can set its retention")
}

const ROLES_BY_TYPE: Record<Exclude<ConversationType, 'PRIVATE'>, MemberRole[]> = {
  GROUP: ['OWNER', 'ADMIN', 'MEMBER'],
  CHANNEL: ['OWNER', 'ADMIN', 'SUBSCRIBER'],
}

/** Only the OWNER sets roles, and only roles of the conversation's type (checked before the target is read). */
export function checkSetsRole(access: MemberAccess, role: MemberRole): void {
  const type = access.conversation.type
  if (type === 'PRIVATE') throw badInput('a private conversation has no roles', 'conversationId')
  if (!ROLES_BY_TYPE[type].includes(role))
    throw badInput(`role ${role} does not exist in a ${type.toLowerCase()}`, 'role')
  if (!isOwner(access.member)) throw forbidden('only the owner can change roles')
}

/** What giving `target` the role does: nothing, a change, or a transfer (there is one OWNER: the old one becomes ADMIN). */
export const roleChange = (target: Role, role: MemberRole): 'none' | 'change' | 'transfer' =>
  target.role === role ? 'none' : role === 'OWNER' ? 'transfer' : 'change'

/** Who leaves hands over: an OWNER leaving passes the conversation on; a channel's OWNER cannot unsubscribe. */
export function checkUnsubscribes(access: MemberAccess): void {
  if (isOwner(access.member)) throw badInput('the owner cannot unsubscribe; transfer ownership first', 'conversationId')
}

/**
 * Editing: the sender, a message not recalled, TEXT only and staying TEXT (decision 0020's order),
 * never a copy (content.copy).
 * The sending rules (checkSender) follow once the block state is read.
 */
export function checkEdit(viewer: Viewer, message: MessageRecord, newKind: MessageKind): void {
  if (!isSender(message, viewer)) throw forbidden('only the sender can edit a message')
  refuseRecalled(message)
  if (message.kind !== 'TEXT')
    throw new DomainError('NOT_EDITABLE', `a ${message.kind} message cannot be edited; only TEXT can`)
  // A copy shows someone else's words under forwardedFrom: editing would put new words in their name.
  if (message.forwardedFrom) throw new DomainError('NOT_EDITABLE', 'a forwarded copy cannot be edited')
  if (message.status === 'STREAMING')
    throw new DomainError('NOT_EDITABLE', 'a streaming message is written by appends until it is finished')
  if (newKind !== 'TEXT') throw badInput('an edit keeps the kind: pass text content', 'content')
}

/** updateCard: the card's sender (operators for a SYSTEM card), a card, not recalled. */
export function checkCardUpdate(viewer: Viewer, message: MessageRecord): void {
  const sender = message.senderType === 'SYSTEM' ? viewer.isOperator : isSender(message, viewer)
  if (!sender) throw forbidden("only the card's sender can update it")
  if (message.kind !== 'CARD') throw new DomainError('NOT_EDITABLE', 'only a CARD message can be updated')
  refuseRecalled(message)
}

/**
 * Recalling: never a SYSTEM message. A GROUP manager recalls its own messages and those of members
 * it outranks at any time (`senderRole` null: the sender left); anyone else only their own, within
 * the window. Returns the window in seconds the recall must fall in, or null for none.
 */
export function recallWindow(
  viewer: Viewer,
  access: MemberAccess,
  message: MessageRecord,
  senderRole: MemberRole | null,
  windowSeconds: number,
): number | null {
  if (message.senderType === 'SYSTEM') throw forbidden('system messages cannot be recalled')
  const own = isSender(message, viewer)
  if (access.conversation.type === 'GROUP' && isManager(access.member) && (own || outranks(access.member, senderRole)))
    return null
  if (!own) throw forbidden('only the sender, or a group owner or admin above them, can recall a message')
  return windowSeconds
}

/**
 * Pinning and unpinning (issue 16): a GROUP or CHANNEL manager; in a PRIVATE conversation either
 * member. With the message: never a SYSTEM notice, never a recalled message.
 */
export function checkPins(access: MemberAccess, message: MessageRecord): void {
  if (access.conversation.type !== 'PRIVATE' && !isManager(access.member))
    throw forbidden('only the owner or an admin can pin messages')
  if (message.senderType === 'SYSTEM') throw badInput('system messages cannot be pinned', 'messageId')
  refuseRecalled(message, 'pinned')
}

/** Reacting (issue 16): any member who can see the message (the action's visibility read), not on a recalled one. */
export const checkReacts = (message: MessageRecord): void => refuseRecalled(message)

/*
 * What a recall hides, for every reader, operators too (decision 0020): the content and the edit
 * history; the viewer's favourite and reminder (delete-for-me stays hers); it is not quoted,
 * forwarded, favourited, reminded of or counted as unread. SQL reads apply the same rule through
 * store/messages.ts `notRecalled` (unread counts, the favourites and reminders lists, search).
 */

/** Recalled, or taken down by an operator (REMOVED): the same tombstone for members. */
export const isRecalled = (message: Pick<MessageRecord, 'status'>) =>
  message.status === 'RECALLED' || message.status === 'REMOVED'

/** MESSAGE_RECALLED; `doing` names what a recalled message cannot be ("quoted"). */
export const recalledError = (doing?: string) =>
  new DomainError('MESSAGE_RECALLED', doing ? `a recalled message cannot be ${doing}` : 'the message was recalled')

export function refuseRecalled(message: Pick<MessageRecord, 'status'>, doing?: string): void {
  if (isRecalled(message)) throw recalledError(doing)
}

export const shownContent = (message: Pick<MessageRecord, 'status' | 'content'>): unknown =>
  isRecalled(message) ? null : message.content
export const shownEdits = <E>(message: Pick<MessageRecord, 'status'>, edits: E[]): E[] =>
  isRecalled(message) ? [] : edits
export const shownViewerState = (message: Pick<MessageRecord, 'status'>, stored: ViewerState): ViewerState =>
  isRecalled(message) ? { favorite: false, remindAt: null, deletedForMe: stored.deletedForMe } : stored

/**
 * A conversation reached through a message an operator reads in adminMessages: operators see its
 * public facts without being a member (decision 0014); everyone else needs membership.
 */
export function requireMemberOrOperator(access: ConversationAccess | null, viewer: Viewer): ConversationAccess {
  if (access && (access.member || viewer.isOperator)) return access
  throw notFound('Conversation')
}

/** The viewer's own membership, which an operator's non-member view does not have. */
export function viewerMembership(access: ConversationAccess): MemberRecord {
  if (!access.member) throw forbidden('viewerMember is member-only; the operator is not a member of this conversation')
  return access.member
}
