import type { Db } from '../../db/client.ts'
import { badInput } from '../core/errors.ts'
import { parseId } from '../core/ids.ts'
import { type Reader } from '../../store/fragments.ts'
import type { MemberRecord, MessageKind, MessageRecord, UserRecord } from '../../store/records.ts'
import { listSearchConversations, searchVisibleMessages, type TextMatch } from '../../store/search.ts'
import { searchMembers, searchUsers as storeSearchUsers } from '../../store/peopleSearch.ts'
import { accessConversation } from '../policy/access.ts'
import { readerOf, type App, type Viewer } from '../core/app.ts'
import { keysetCursor } from '../core/cursors.ts'
import { pageSize } from '../core/input.ts'
import { forwardPage, type Connection, type PageInfo } from '../core/paging.ts'
import { searchableFields } from './documents.ts'
import { parseSearchQuery, type SearchQuery } from './query.ts'
import { matchesConversationWords, toTsquery } from './text.ts'
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

const MESSAGE_CURSOR = keysetCursor('search', ['time', 'id', 'id'])
const messageCursor = (m: MessageRecord) => MESSAGE_CURSOR.encode(m.sentAt, m.conversationId, m.seq)

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
  const limit = pageSize(args.first, 'first')
  const position = MESSAGE_CURSOR.decode(args.after, 'after')
  const after = position && { sentAt: position[0], conversationId: position[1], seq: position[2] }
  const filter = args.filter ?? {}
  if (filter.kinds && !filter.kinds.length)
    throw badInput('filter.kinds must name at least one kind (or be left out)', 'filter.kinds')
  const conversationId = filter.conversationId ? parseId(filter.conversationId, 'Conversation') : null
  const reader = readerOf(app, viewer)
  if (conversationId !== null) await accessConversation(reader, viewer, conversationId, { lock: false })
  const rows = await searchVisibleMessages(reader, viewer, {
    match: await messageMatch(reader, viewer, query, conversationId),
    conversationId,
    senderId: filter.senderId ? parseId(filter.senderId, 'User') : null,
    kinds: filter.kinds ? [...new Set(filter.kinds)] : null,
    sentAfter: filter.sentAfter ?? null,
    sentBefore: filter.sentBefore ?? null,
    after,
    limit: limit + 1,
  })
  const { edges, pageInfo } = forwardPage(rows, limit, messageCursor, after !== null)
  return {
    edges: edges.map((e) => ({
      cursor: e.cursor,
      node: e.node,
      ...snippetOf(searchableFields(e.node.kind, e.node.content), query.terms),
    })),
    pageInfo,
  }
}

/** Past this many conversations, a word query asks the documents' index rather than one lookup per conversation. */
const MAX_CONVERSATIONS_PER_QUERY = 200

/**
 * How a search matches: a word query (no CJK term) from a viewer in at most 200 conversations, or in
 * one conversation, is looked up per conversation in the words index (the query qualified by each
 * conversation id, one index scan each), so it costs the matches in those conversations only; other queries read
 * every match from the documents' index (docs/search.md "How it works").
 */
export async function messageMatch(
  db: Db,
  reader: Reader,
  query: SearchQuery,
  conversationId: number | null,
): Promise<TextMatch> {
  const plain = { documents: query.tsquery }
  if (!matchesConversationWords(query.terms)) return plain
  const ids =
    conversationId !== null
      ? [conversationId]
      : await listSearchConversations(db, reader, MAX_CONVERSATIONS_PER_QUERY + 1)
  if (!ids.length || ids.length > MAX_CONVERSATIONS_PER_QUERY) return plain
  return { conversationWords: ids.map((id) => toTsquery(query.terms, id)) }
}

const USER_CURSOR = keysetCursor('users', ['text', 'text'])
const userCursor = (u: UserRecord) => USER_CURSOR.encode(u.displayName, u.handle)

/** Query.searchUsers: people by handle or display name (to start a private chat), by display name. */
export async function searchUsers(
  app: App,
  args: { query: string; first?: number | null; after?: string | null },
): Promise<Connection<UserRecord>> {
  const query = parseSearchQuery(args.query)
  const limit = pageSize(args.first, 'first')
  const position = USER_CURSOR.decode(args.after, 'after')
  const after = position && { displayName: position[0], handle: position[1] }
  const rows = await storeSearchUsers(app.db, query.tsquery, after, limit + 1)
  return forwardPage(rows, limit, userCursor, after !== null)
}

/** Conversation.memberSearch (the @ picker): current members whose handle or display name matches. */
export async function memberSearch(
  app: App,
  conversationId: number,
  args: { query: string; first?: number | null },
): Promise<MemberRecord[]> {
  const query = parseSearchQuery(args.query)
  return searchMembers(app.db, conversationId, query.tsquery, pageSize(args.first, 'first'))
}
