import { badInput, notFound } from '../errors.ts'
import { findMember, listInbox, listMembers, type ConversationAccess } from '../store/conversations.ts'
import type { ConversationType, MemberRecord } from '../store/records.ts'
import type { App, Viewer } from './app.ts'
import { checkPageSize, decodeCursor, decodeIntCursor, encodeCursor, forwardPage, type Connection } from './paging.ts'

const INBOX_CURSOR = 'inbox'
const inboxCursor = (a: ConversationAccess) => encodeCursor(INBOX_CURSOR, `${a.conversation.lastActivityAt.toISOString()}|${a.conversation.id}`)

function decodeInboxCursor(after: string | null | undefined): { activityAt: Date; id: number } | null {
  if (after == null) return null
  const [at = '', id = ''] = decodeCursor(after, INBOX_CURSOR, 'after').split('|')
  const activityAt = new Date(at)
  if (Number.isNaN(activityAt.getTime()) || !/^[1-9][0-9]{0,15}$/.test(id)) throw badInput('after is not a valid cursor', 'after')
  return { activityAt, id: Number(id) }
}

/** Viewer.conversations: most recent activity first. */
export async function listConversations(
  app: App,
  viewer: Viewer,
  args: { first?: number | null; after?: string | null; type?: ConversationType | null },
): Promise<Connection<ConversationAccess>> {
  const limit = checkPageSize(args.first, 'first')
  const after = decodeInboxCursor(args.after)
  const rows = await listInbox(app.db, viewer.userId, { type: args.type ?? null, after, limit: limit + 1 })
  return forwardPage(rows, limit, inboxCursor, after !== null)
}

const MEMBER_CURSOR = 'member'

export async function listConversationMembers(app: App, conversationId: number, args: { first?: number | null; after?: string | null }): Promise<Connection<MemberRecord>> {
  const limit = checkPageSize(args.first, 'first')
  const afterUserId = decodeIntCursor(args.after, MEMBER_CURSOR, 'after')
  const rows = await listMembers(app.db, conversationId, { afterUserId: afterUserId ?? 0, limit: limit + 1 })
  return forwardPage(rows, limit, (m) => encodeCursor(MEMBER_CURSOR, m.userId), afterUserId !== null)
}

/** A current member of a conversation (the caller has checked the viewer may see the conversation). */
export async function findConversationMember(app: App, conversationId: number, userId: number): Promise<MemberRecord> {
  return (await findMember(app.db, conversationId, userId)) ?? Promise.reject(notFound('ConversationMember'))
}
