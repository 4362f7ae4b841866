import { parseId } from '../core/ids.ts'
import { listAdminMessages } from '../../store/admin.ts'
import type { ConversationType, MessageKind, MessageRecord } from '../../store/records.ts'
import type { App, Viewer } from '../core/app.ts'
import { keysetCursor } from '../core/cursors.ts'
import { pageSize } from '../core/input.ts'
import { forwardPage, type Connection } from '../core/paging.ts'
import { requireOperator } from '../policy/policy.ts'
import { parseSearchQuery } from '../search/query.ts'
import { transact } from '../core/transact.ts'
import { recordAudit } from '../governance/audit.ts'

export type AdminMessageFilter = {
  conversationId?: string | null
  senderId?: string | null
  conversationType?: ConversationType | null
  kind?: MessageKind | null
  sentAfter?: Date | null
  sentBefore?: Date | null
  text?: string | null
}

const ADMIN_CURSOR = keysetCursor('admin', ['time', 'id', 'id'])
const adminCursor = (m: MessageRecord) => ADMIN_CURSOR.encode(m.sentAt, m.conversationId, m.seq)

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
  requireOperator(viewer, 'see all messages')
  const limit = pageSize(args.first, 'first')
  const cursor = ADMIN_CURSOR.decode(args.after, 'after')
  const after = cursor && { sentAt: cursor[0], conversationId: cursor[1], seq: cursor[2] }
  const query = {
    conversationId: filter.conversationId ? parseId(filter.conversationId, 'Conversation') : null,
    senderId: filter.senderId ? parseId(filter.senderId, 'User') : null,
    conversationType: filter.conversationType ?? null,
    kind: filter.kind ?? null,
    sentAfter: filter.sentAfter ?? null,
    sentBefore: filter.sentBefore ?? null,
    tsquery: filter.text == null ? null : parseSearchQuery(filter.text, 'filter.text').tsquery,
  }
  // Audited in the read's own transaction: an entry exists exactly for each page an operator read.
  return transact(app, async (tx) => {
    const rows = await listAdminMessages(tx, query, after, limit + 1)
    await recordAudit(tx, viewer, 'adminMessages.read', filter.conversationId ?? null, { filter, ...args })
    return { result: forwardPage(rows, limit, adminCursor, after !== null), events: [] }
  })
}
