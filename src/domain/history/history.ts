import { badInput, DomainError } from '../core/errors.ts'
import type { ConversationAccess } from '../../store/conversations.ts'
import {
  readConversationPage,
  readHistoryPage,
  type HistoryPage,
  type PageOptions,
  type SeqRange,
} from '../../store/history.ts'
import type { MessageRecord } from '../../store/records.ts'
import { readerOf, type App, type Viewer } from '../core/app.ts'
import { keysetCursor } from '../core/cursors.ts'
import { pageSize, position, windowSize } from '../core/input.ts'
import { LIMITS } from '../core/limits.ts'
import { primeUsers, type Loaders } from './loaders.ts'
import { toConnection, type Connection, type PageArgs } from '../core/paging.ts'

/** History's cursors: a message's seq. */
export const SEQ_CURSOR = keysetCursor('seq', ['int'])
export const seqCursor = (m: Pick<MessageRecord, 'seq'>) => SEQ_CURSOR.encode(m.seq)

/** Hands what came with a page to the request's loaders: the senders, and the quoted messages (null for a quoted seq the reader may not see). */
function primeLoaders(loaders: Loaders, conversationId: number, page: HistoryPage): void {
  primeUsers(loaders, page.users)
  for (const seq of page.quotedSeqs)
    loaders.messages.prime({ conversationId, seq }, page.quoted.find((m) => m.seq === seq) ?? null)
}

async function readPage(
  app: App,
  viewer: Viewer,
  loaders: Loaders,
  conversationId: number,
  opts: PageOptions,
  beyond: SeqRange | null,
): Promise<HistoryPage> {
  const page = await readHistoryPage(readerOf(app, viewer), viewer, conversationId, opts, beyond)
  primeLoaders(loaders, conversationId, page)
  return page
}

/**
 * Which of a page's optional reads the request's fields need: the quoted messages (Message.quoted)
 * and each side's pageInfo flag (the one past the cursor costs an EXISTS).
 */
export type PageFields = { quoted: boolean; hasNextPage: boolean; hasPreviousPage: boolean }

type PagePlan = { opts: PageOptions; beyond: SeqRange | null; backward: boolean; limit: number }

/** The page that `args` ask for; BAD_USER_INPUT for arguments that cannot be one. */
function planPage(args: PageArgs, fields: PageFields): PagePlan {
  if (args.first != null && args.last != null)
    throw badInput('pass first/after or last/before, not both first and last', 'first')
  const afterSeq = SEQ_CURSOR.decode(args.after, 'after')?.[0] ?? null
  const beforeSeq = SEQ_CURSOR.decode(args.before, 'before')?.[0] ?? null
  const backward = args.last != null || (args.first == null && afterSeq === null)
  const limit = backward ? pageSize(args.last, 'last') : pageSize(args.first, 'first')
  const opts = {
    afterSeq,
    beforeSeq,
    from: backward ? ('end' as const) : ('start' as const),
    limit: limit + 1,
    quoted: fields.quoted,
  }
  // Past the cursor, the other direction: whether anything visible lies there (exact pageInfo).
  // Not read when its flag is not asked for (then it is reported false, as no field shows it).
  const beyond = backward
    ? fields.hasNextPage && beforeSeq !== null && { afterSeq: beforeSeq - 1, beforeSeq: null }
    : fields.hasPreviousPage && afterSeq !== null && { afterSeq: null, beforeSeq: afterSeq + 1 }
  return { opts, beyond: beyond || null, backward, limit }
}

function toPage(plan: PagePlan, rows: MessageRecord[], beyond: boolean): Connection<MessageRecord> {
  const more = rows.length > plan.limit
  const nodes = rows.slice(0, plan.limit)
  if (plan.backward) return toConnection(nodes.reverse(), seqCursor, { hasPreviousPage: more, hasNextPage: beyond })
  return toConnection(nodes, seqCursor, { hasPreviousPage: beyond, hasNextPage: more })
}

const argsKey = (args: PageArgs) =>
  JSON.stringify([args.first ?? null, args.after ?? null, args.last ?? null, args.before ?? null])

/** Pages read together with their conversation (prefetchMessages), by the access object they came with and their arguments. */
const prefetched = new WeakMap<ConversationAccess, Map<string, Connection<MessageRecord>>>()

/**
 * Conversation.messages: a Relay connection over seq cursors, edges always ascending. No arguments
 * means the newest page; last/before page back in time, first/after forward. pageInfo is exact in
 * both directions (the opposite side is one EXISTS on the same index, in the page's statement).
 */
export async function listMessages(
  app: App,
  viewer: Viewer,
  loaders: Loaders,
  access: ConversationAccess,
  args: PageArgs,
  fields: PageFields,
): Promise<Connection<MessageRecord>> {
  const read = prefetched.get(access)?.get(argsKey(args))
  if (read) return read
  const plan = planPage(args, fields)
  const { messages, beyond } = await readPage(app, viewer, loaders, access.conversation.id, plan.opts, plan.beyond)
  return toPage(plan, messages, beyond)
}

/**
 * Message.replies: a thread's replies the viewer may see, paged as history is (ascending seq, the
 * same cursors and arguments); `root` is a message the viewer sees. A reply has none.
 */
export async function listReplies(
  app: App,
  viewer: Viewer,
  loaders: Loaders,
  root: MessageRecord,
  args: PageArgs,
  fields: PageFields,
): Promise<Connection<MessageRecord>> {
  if (root.threadRootSeq !== null)
    return toConnection<MessageRecord>([], seqCursor, { hasNextPage: false, hasPreviousPage: false })
  const plan = planPage(args, fields)
  const opts = { ...plan.opts, threadRootSeq: root.seq }
  const { messages, beyond } = await readPage(app, viewer, loaders, root.conversationId, opts, plan.beyond)
  return toPage(plan, messages, beyond)
}

/**
 * For a request that asks for a conversation and a page of its messages: reads both in one
 * statement and primes the conversations loader with the conversation, so the membership check
 * that follows (and listMessages with the same arguments) need no statement of their own.
 * Arguments that cannot be a page are left for listMessages to refuse, at its field.
 */
export async function prefetchMessages(
  app: App,
  viewer: Viewer,
  loaders: Loaders,
  conversationId: number,
  args: PageArgs,
  fields: PageFields,
): Promise<void> {
  let plan: PagePlan
  try {
    plan = planPage(args, fields)
  } catch (error) {
    if (error instanceof DomainError) return
    throw error
  }
  const { access, ...page } = await readConversationPage(
    readerOf(app, viewer),
    viewer,
    conversationId,
    plan.opts,
    plan.beyond,
  )
  loaders.conversations.prime(conversationId, access)
  if (!access?.member) return
  primeLoaders(loaders, conversationId, page)
  // The loader keeps what it held already; only the access it hands out carries the page.
  const held = await loaders.conversations.load(conversationId)
  if (held) prefetched.set(held, new Map([[argsKey(args), toPage(plan, page.messages, page.beyond)]]))
}

/**
 * A window around an anchor seq (e.g. the first unread): the older half before it, the anchor and
 * the newer half after it, with both page directions open from there.
 */
export async function listMessagesAround(
  app: App,
  viewer: Viewer,
  loaders: Loaders,
  conversationId: number,
  seq: number,
  count: number | null | undefined,
  fields: PageFields,
): Promise<Connection<MessageRecord>> {
  const size = windowSize(count, 'count', LIMITS.defaultPageSize)
  position(seq, 'seq')
  const olderCount = Math.floor(size / 2)
  const newerCount = size - olderCount
  const [{ messages: older }, { messages: newer }] = await Promise.all([
    readPage(
      app,
      viewer,
      loaders,
      conversationId,
      { afterSeq: null, beforeSeq: seq, from: 'end', limit: olderCount + 1, quoted: fields.quoted },
      null,
    ),
    readPage(
      app,
      viewer,
      loaders,
      conversationId,
      { afterSeq: seq - 1, beforeSeq: null, from: 'start', limit: newerCount + 1, quoted: fields.quoted },
      null,
    ),
  ])
  const nodes = [...older.slice(0, olderCount).reverse(), ...newer.slice(0, newerCount)]
  // With olderCount 0 (count 1) whether anything older exists still has to be known.
  const hasPreviousPage = older.length > olderCount
  return toConnection(nodes, seqCursor, { hasPreviousPage, hasNextPage: newer.length > newerCount })
}
