import { forbidden } from '../errors.ts'
import { parseId } from '../ids.ts'
import { listAdminMessages } from '../store/admin.ts'
import type { ConversationType, MessageKind, MessageRecord } from '../store/records.ts'
import type { App, Viewer } from './app.ts'
import { checkPageSize, forwardPage, type Connection } from './paging.ts'
import { parseSearchQuery } from './searchQuery.ts'
import { sentCursor } from './sentCursor.ts'

export type AdminMessageFilter = {
  conversationId?: string | null
  senderId?: string | null
  conversationType?: ConversationType | null
  kind?: MessageKind | null
  sentAfter?: Date | null
  sentBefore?: Date | null
  text?: string | null
}

const cursor = sentCursor('admin')

/**
 * The operators' read-only view of every message, newest first (sentAfter inclusive, sentBefore
 * exclusive). Messages come as stored: no membership, visibility or delete-for-me applies. `text`
 * matches as searchMessages does (a recalled message has no text to match).
 */
export async function adminMessages(
  app: App,
  viewer: Viewer,
  filter: AdminMessageFilter,
  args: { first?: number | null; after?: string | null },
): Promise<Connection<MessageRecord>> {
  if (!viewer.isOperator) throw forbidden('only operators see all messages')
  const limit = checkPageSize(args.first, 'first')
  const after = cursor.decode(args.after)
  const query = {
    conversationId: filter.conversationId ? parseId(filter.conversationId, 'Conversation') : null,
    senderId: filter.senderId ? parseId(filter.senderId, 'User') : null,
    conversationType: filter.conversationType ?? null,
    kind: filter.kind ?? null,
    sentAfter: filter.sentAfter ?? null,
    sentBefore: filter.sentBefore ?? null,
    tsquery: filter.text == null ? null : parseSearchQuery(filter.text, 'filter.text').tsquery,
  }
  const rows = await listAdminMessages(app.db, query, after, limit + 1)
  return forwardPage(rows, limit, cursor.encode, after !== null)
}
