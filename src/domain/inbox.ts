import { notFound } from '../errors.ts'
import { findMember, listInbox, listMembers, type ConversationAccess } from '../store/conversations.ts'
import type { ConversationType, MemberRecord } from '../store/records.ts'
import type { App, Viewer } from './app.ts'
import { keysetCursor } from './cursors.ts'
import { pageSize } from './input.ts'
import { forwardPage, type Connection } from './paging.ts'

const INBOX_CURSOR = keysetCursor('inbox', ['time', 'id'])
const inboxCursor = (a: ConversationAccess) => INBOX_CURSOR.encode(a.conversation.lastActivityAt, a.conversation.id)

/** Viewer.conversations: most recent activity first. */
export async function listConversations(
  app: App,
  viewer: Viewer,
  args: { first?: number | null; after?: string | null; type?: ConversationType | null },
): Promise<Connection<ConversationAccess>> {
  const limit = pageSize(args.first, 'first')
  const cursor = INBOX_CURSOR.decode(args.after, 'after')
  const after = cursor && { activityAt: cursor[0], id: cursor[1] }
  const rows = await listInbox(app.db, viewer.userId, { type: args.type ?? null, after, limit: limit + 1 })
  return forwardPage(rows, limit, inboxCursor, after !== null)
}

const MEMBER_CURSOR = keysetCursor('member', ['int'])

export async function listConversationMembers(app: App, conversationId: number, args: { first?: number | null; after?: string | null }): Promise<Connection<MemberRecord>> {
  const limit = pageSize(args.first, 'first')
  const after = MEMBER_CURSOR.decode(args.after, 'after')
  const rows = await listMembers(app.db, conversationId, { afterUserId: after?.[0] ?? 0, limit: limit + 1 })
  return forwardPage(rows, limit, (m) => MEMBER_CURSOR.encode(m.userId), after !== null)
}

/** A current member of a conversation (the caller has checked the viewer may see the conversation). */
export async function findConversationMember(app: App, conversationId: number, userId: number): Promise<MemberRecord> {
  return (await findMember(app.db, conversationId, userId)) ?? Promise.reject(notFound('ConversationMember'))
}
