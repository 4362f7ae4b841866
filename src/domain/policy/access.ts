import { notFound } from '../core/errors.ts'
import { lockConversation } from '../../store/conversationLocks.ts'
import { findConversationsForUser, type ConversationAccess } from '../../store/conversations.ts'
import type { Conn } from '../../store/sql.ts'
import type { MemberRecord } from '../../store/records.ts'
import type { Viewer } from '../core/app.ts'

export type MemberAccess = ConversationAccess & { member: MemberRecord }

/**
 * The viewer's conversation and membership, or NOT_FOUND, whether the conversation is missing or
 * the viewer is not a member (existence does not leak). With `lock` the conversation row is locked
 * for a write that takes a seq or pts.
 */
export async function accessConversation(
  conn: Conn,
  viewer: Viewer,
  conversationId: number,
  opts: { lock: boolean },
): Promise<MemberAccess> {
  const access = opts.lock
    ? await lockConversation(conn, conversationId, viewer.userId)
    : (await findConversationsForUser(conn, [conversationId], viewer.userId))[0]
  return requireMember(access ?? null)
}

export function requireMember(access: ConversationAccess | null): MemberAccess {
  if (!access?.member) throw notFound('Conversation')
  return access as MemberAccess
}
