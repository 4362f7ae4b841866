import { badInput } from '../errors.ts'
import { listVisibleMessages, listVisiblePage } from '../store/messages.ts'
import type { MessageRecord } from '../store/records.ts'
import type { App, Viewer } from './app.ts'
import { keysetCursor } from './cursors.ts'
import { pageSize, position, windowSize } from './input.ts'
import { LIMITS } from './limits.ts'
import { toConnection, type Connection, type PageArgs } from './paging.ts'

const SEQ_CURSOR = keysetCursor('seq', ['int'])
export const seqCursor = (m: Pick<MessageRecord, 'seq'>) => SEQ_CURSOR.encode(m.seq)

/**
 * Conversation.messages: a Relay connection over seq cursors, edges always ascending. No arguments
 * means the newest page; last/before page back in time, first/after forward. pageInfo is exact in
 * both directions (the opposite side is one EXISTS on the same index, in the page's statement).
 */
export async function listMessages(app: App, viewer: Viewer, conversationId: number, args: PageArgs): Promise<Connection<MessageRecord>> {
  if (args.first != null && args.last != null) throw badInput('pass first/after or last/before, not both first and last', 'first')
  const afterSeq = SEQ_CURSOR.decode(args.after, 'after')?.[0] ?? null
  const beforeSeq = SEQ_CURSOR.decode(args.before, 'before')?.[0] ?? null
  const backward = args.last != null || (args.first == null && afterSeq === null)
  const limit = backward ? pageSize(args.last, 'last') : pageSize(args.first, 'first')

  const page = { afterSeq, beforeSeq, from: backward ? ('end' as const) : ('start' as const), limit: limit + 1 }
  // Past the cursor, the other direction: whether anything visible lies there (exact pageInfo).
  const opposite = backward ? beforeSeq !== null && { afterSeq: beforeSeq - 1, beforeSeq: null } : afterSeq !== null && { afterSeq: null, beforeSeq: afterSeq + 1 }
  const { messages: rows, beyond } = opposite
    ? await listVisiblePage(app.db, viewer, conversationId, page, opposite)
    : { messages: await listVisibleMessages(app.db, viewer, conversationId, page), beyond: false }
  const more = rows.length > limit
  const nodes = rows.slice(0, limit)
  if (backward) return toConnection(nodes.reverse(), seqCursor, { hasPreviousPage: more, hasNextPage: beyond })
  return toConnection(nodes, seqCursor, { hasPreviousPage: beyond, hasNextPage: more })
}

/**
 * A window around an anchor seq (e.g. the first unread): the older half before it, the anchor and
 * the newer half after it, with both page directions open from there.
 */
export async function listMessagesAround(app: App, viewer: Viewer, conversationId: number, seq: number, count: number | null | undefined): Promise<Connection<MessageRecord>> {
  const size = windowSize(count, 'count', LIMITS.defaultPageSize)
  position(seq, 'seq')
  const olderCount = Math.floor(size / 2)
  const newerCount = size - olderCount
  const [older, newer] = await Promise.all([
    listVisibleMessages(app.db, viewer, conversationId, { afterSeq: null, beforeSeq: seq, from: 'end', limit: olderCount + 1 }),
    listVisibleMessages(app.db, viewer, conversationId, { afterSeq: seq - 1, beforeSeq: null, from: 'start', limit: newerCount + 1 }),
  ])
  const nodes = [...older.slice(0, olderCount).reverse(), ...newer.slice(0, newerCount)]
  // With olderCount 0 (count 1) whether anything older exists still has to be known.
  const hasPreviousPage = older.length > olderCount
  return toConnection(nodes, seqCursor, { hasPreviousPage, hasNextPage: newer.length > newerCount })
}
