import { badInput, forbidden } from '../errors.ts'
import { parseId } from '../ids.ts'
import { listAdminMessages, type AdminCursor } from '../store/admin.ts'
import type { ConversationType, MessageKind, MessageRecord } from '../store/records.ts'
import type { App, Viewer } from './app.ts'
import { checkPageSize, decodeCursor, encodeCursor, forwardPage, type Connection } from './paging.ts'

export type AdminMessageFilter = {
  conversationId?: string | null
  senderId?: string | null
  conversationType?: ConversationType | null
  kind?: MessageKind | null
  sentAfter?: Date | null
  sentBefore?: Date | null
}

const ADMIN_CURSOR = 'admin'
const adminCursor = (m: MessageRecord) => encodeCursor(ADMIN_CURSOR, `${m.sentAt.toISOString()}|${m.conversationId}|${m.seq}`)

function decodeAdminCursor(after: string | null | undefined): AdminCursor | null {
  if (after == null) return null
  const [at = '', conversationId = '', seq = ''] = decodeCursor(after, ADMIN_CURSOR, 'after').split('|')
  const sentAt = new Date(at)
  const id = /^[1-9][0-9]{0,15}$/
  if (Number.isNaN(sentAt.getTime()) || !id.test(conversationId) || !id.test(seq)) throw badInput('after is not a valid cursor', 'after')
  return { sentAt, conversationId: Number(conversationId), seq: Number(seq) }
}

/**
 * The operators' read-only view of every message, newest first (sentAfter inclusive, sentBefore
 * exclusive). Messages come as stored: no membership, visibility or delete-for-me applies.
 */
export async function adminMessages(
  app: App,
  viewer: Viewer,
  filter: AdminMessageFilter,
  args: { first?: number | null; after?: string | null },
): Promise<Connection<MessageRecord>> {
  if (!viewer.isOperator) throw forbidden('only operators see all messages')
  const limit = checkPageSize(args.first, 'first')
  const after = decodeAdminCursor(args.after)
  const query = {
    conversationId: filter.conversationId ? parseId(filter.conversationId, 'Conversation') : null,
    senderId: filter.senderId ? parseId(filter.senderId, 'User') : null,
    conversationType: filter.conversationType ?? null,
    kind: filter.kind ?? null,
    sentAfter: filter.sentAfter ?? null,
    sentBefore: filter.sentBefore ?? null,
  }
  const rows = await listAdminMessages(app.db, query, after, limit + 1)
  return forwardPage(rows, limit, adminCursor, after !== null)
}
