import { badInput } from '../errors.ts'
import { parseId } from '../ids.ts'
import type { MemberRecord, MessageKind, MessageRecord, UserRecord } from '../store/records.ts'
import { searchMembers, searchUsers as storeSearchUsers, searchVisibleMessages, type UserCursor } from '../store/search.ts'
import { accessConversation } from './access.ts'
import type { App, Viewer } from './app.ts'
import { checkPageSize, decodeCursor, encodeCursor, forwardPage, type Connection, type PageInfo } from './paging.ts'
import { searchableFields } from './searchIndex.ts'
import { parseSearchQuery } from './searchQuery.ts'
import { sentCursor } from './sentCursor.ts'
import { snippetOf, type TextRange } from './snippet.ts'

export type MessageSearchFilter = {
  conversationId?: string | null
  senderId?: string | null
  kinds?: readonly MessageKind[] | null
  sentAfter?: Date | null
  sentBefore?: Date | null
}

export type MessageSearchEdge = { cursor: string; node: MessageRecord; snippet: string; highlights: TextRange[] }
export type MessageSearchConnection = { edges: MessageSearchEdge[]; pageInfo: PageInfo }

const messageCursor = sentCursor('search')

/**
 * Query.searchMessages: the viewer's messages that hold every term of the query, newest first, under
 * the visibility rule every read path shares; each with a snippet around its first match. A
 * conversation filter the viewer is not in is NOT_FOUND, like the conversation itself.
 */
export async function searchMessages(
  app: App,
  viewer: Viewer,
  args: { query: string; filter?: MessageSearchFilter | null; first?: number | null; after?: string | null },
): Promise<MessageSearchConnection> {
  const query = parseSearchQuery(args.query)
  const limit = checkPageSize(args.first, 'first')
  const after = messageCursor.decode(args.after)
  const filter = args.filter ?? {}
  if (filter.kinds && !filter.kinds.length) throw badInput('filter.kinds must name at least one kind (or be left out)', 'filter.kinds')
  const conversationId = filter.conversationId ? parseId(filter.conversationId, 'Conversation') : null
  if (conversationId !== null) await accessConversation(app.db, viewer, conversationId, { lock: false })
  const rows = await searchVisibleMessages(app.db, viewer, {
    tsquery: query.tsquery,
    conversationId,
    senderId: filter.senderId ? parseId(filter.senderId, 'User') : null,
    kinds: filter.kinds ? [...new Set(filter.kinds)] : null,
    sentAfter: filter.sentAfter ?? null,
    sentBefore: filter.sentBefore ?? null,
    after,
    limit: limit + 1,
  })
  const { edges, pageInfo } = forwardPage(rows, limit, messageCursor.encode, after !== null)
  return { edges: edges.map((e) => ({ ...e, ...snippetOf(searchableFields(e.node.kind, e.node.content), query.terms) })), pageInfo }
}

const USER_CURSOR = 'users'
const userCursor = (u: UserRecord) => encodeCursor(USER_CURSOR, JSON.stringify([u.displayName, u.handle]))

function decodeUserCursor(after: string | null | undefined): UserCursor | null {
  if (after == null) return null
  let key: unknown
  try {
    key = JSON.parse(decodeCursor(after, USER_CURSOR, 'after'))
  } catch {
    key = null
  }
  const [displayName, handle, ...rest] = Array.isArray(key) ? key : []
  if (typeof displayName !== 'string' || typeof handle !== 'string' || rest.length) throw badInput('after is not a valid cursor', 'after')
  return { displayName, handle }
}

/** Query.searchUsers: people by handle or display name (to start a private chat), by display name. */
export async function searchUsers(app: App, args: { query: string; first?: number | null; after?: string | null }): Promise<Connection<UserRecord>> {
  const query = parseSearchQuery(args.query)
  const limit = checkPageSize(args.first, 'first')
  const after = decodeUserCursor(args.after)
  const rows = await storeSearchUsers(app.db, query.tsquery, after, limit + 1)
  return forwardPage(rows, limit, userCursor, after !== null)
}

/** Conversation.memberSearch (the @ picker): current members whose handle or display name matches. */
export async function memberSearch(app: App, conversationId: number, args: { query: string; first?: number | null }): Promise<MemberRecord[]> {
  const query = parseSearchQuery(args.query)
  return searchMembers(app.db, conversationId, query.tsquery, checkPageSize(args.first, 'first'))
}
