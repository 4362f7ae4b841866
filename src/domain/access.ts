import { forbidden, notFound } from '../errors.ts'
import { findConversationsForUser, lockConversation, type ConversationAccess } from '../store/conversations.ts'
import type { Conn } from '../store/sql.ts'
import type { MemberRecord } from '../store/records.ts'
import type { Viewer } from './app.ts'

export type MemberAccess = ConversationAccess & { member: MemberRecord }

/**
 * The viewer's conversation and membership, or NOT_FOUND, whether the conversation is missing or
 * the viewer is not a member (existence does not leak). With `lock` the conversation row is locked
 * for a write that takes a seq or pts.
 */
export async function accessConversation(conn: Conn, viewer: Viewer, conversationId: number, opts: { lock: boolean }): Promise<MemberAccess> {
  const access = opts.lock
    ? await lockConversation(conn, conversationId, viewer.userId)
    : (await findConversationsForUser(conn, [conversationId], viewer.userId))[0]
  return requireMember(access ?? null)
}

export function requireMember(access: ConversationAccess | null): MemberAccess {
  if (!access?.member) throw notFound('Conversation')
  return access as MemberAccess
}

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
