import { notFound } from '../core/errors.ts'
import { type ConversationAccess } from '../../store/conversations.ts'
import { findMember, listMembers } from '../../store/members.ts'
import { listInbox, type InboxEntry } from '../../store/inbox.ts'
import type { ConversationType, MemberRecord } from '../../store/records.ts'
import { readerOf, type App, type Viewer } from '../core/app.ts'
import { keysetCursor } from '../core/cursors.ts'
import { pageSize } from '../core/input.ts'
import { forwardPage, type Connection } from '../core/paging.ts'

// The cursor holds the whole sort key (pinned, pin or activity time, id), so paging stays exact across the two parts.
const INBOX_CURSOR = keysetCursor('inbox', ['bool', 'time', 'id'])
const inboxCursor = ({ key }: InboxEntry) => INBOX_CURSOR.encode(key.pinned, key.at, key.id)

/**
 * Viewer.conversations: pinned ones first (most recently pinned first), then the rest by most
 * recent activity; archived ones only (and only they) with archived: true.
 */
export async function listConversations(
  app: App,
  viewer: Viewer,
  args: { first?: number | null; after?: string | null; type?: ConversationType | null; archived?: boolean | null },
): Promise<Connection<ConversationAccess>> {
  const limit = pageSize(args.first, 'first')
  const cursor = INBOX_CURSOR.decode(args.after, 'after')
  const after = cursor && { pinned: cursor[0], at: cursor[1], id: cursor[2] }
  const rows = await listInbox(readerOf(app, viewer), viewer.userId, {
    type: args.type ?? null,
    archived: args.archived ?? false,
    after,
    limit: limit + 1,
  })
  return forwardPage(rows, limit, inboxCursor, after !== null)
}

const MEMBER_CURSOR = keysetCursor('member', ['int'])

export async function listConversationMembers(
  app: App,
  conversationId: number,
  args: { first?: number | null; after?: string | null },
): Promise<Connection<MemberRecord>> {
  const limit = pageSize(args.first, 'first')
  const after = MEMBER_CURSOR.decode(args.after, 'after')
  const rows = await listMembers(app.db, conversationId, { afterUserId: after?.[0] ?? 0, limit: limit + 1 })
  return forwardPage(rows, limit, (m) => MEMBER_CURSOR.encode(m.userId), after !== null)
}

/** A current member of a conversation (the caller has checked the viewer may see the conversation). */
export async function findConversationMember(app: App, conversationId: number, userId: number): Promise<MemberRecord> {
  return (await findMember(app.db, conversationId, userId)) ?? Promise.reject(notFound('ConversationMember'))
}
