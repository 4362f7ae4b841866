import { Client, fetchExchange, subscriptionExchange } from '@urql/vue'
import { cacheExchange, type Cache, type KeyingConfig } from '@urql/exchange-graphcache'
import { relayPagination } from '@urql/exchange-graphcache/extras'
import { createClient as createWsClient } from 'graphql-ws'
import { appendMessage, writeStreamText, type NewMessage } from './messageCache.ts'
import { noteStreamText } from './streamTexts.ts'
import schema from './gql/urql-schema.ts'

/**
 * Object types without an id (pages, content kinds, settings, receipts) are embedded in their
 * parent. A message edge is keyed by its message, so one from a send or an event can join a page.
 */
const keys: KeyingConfig = {
  ...Object.fromEntries(
    schema.__schema.types
      .filter((t) => t.kind === 'OBJECT' && !t.name.startsWith('__') && !t.fields.some((f) => f.name === 'id'))
      .map((t) => [t.name, () => null]),
  ),
  MessageEdge: (edge) => (edge.node as { id?: string } | undefined)?.id ?? null,
}

// Hand-written cache logic 1, a new message's place in the history or a thread: messageCache.ts.

/**
 * Hand-written cache logic 2: a ReadEvent names a reader and a seq, but receipts hang off each of
 * the viewer's messages without an id; drop the ones it may change, so the page refetches them.
 */
function invalidateReceipts(cache: Cache, conversationId: string, lastReadSeq: number) {
  const conversation = { __typename: 'Conversation', id: conversationId }
  for (const field of cache.inspectFields(conversation).filter((f) => f.fieldName === 'messages')) {
    const connection = cache.resolve(conversation, field.fieldKey) as string | null
    const edges = connection ? ((cache.resolve(connection, 'edges') as string[] | null) ?? []) : []
    for (const edge of edges) {
      const message = cache.resolve(edge, 'node') as string | null
      if (!message || (cache.resolve(message, 'seq') as number) > lastReadSeq) continue
      const receipt = cache.resolve(message, 'receipt') as string | null
      if (receipt && (cache.resolve(receipt, 'unreadCount') as number) > 0) cache.invalidate(message, 'receipt')
    }
  }
}

type MessageEventData = { __typename: 'MessageEvent'; kind: string; cursor: string; message: NewMessage }
type StreamEventData = { __typename: 'MessageStreamEvent'; messageId: string; sequence: number; text: string }
type ConversationEventData =
  MessageEventData | StreamEventData | { __typename: 'ReadEvent'; lastReadSeq: number } | { __typename: string }

export function createClient(token: string) {
  const authorization = `Bearer ${token}`
  const wsUrl = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/graphql`
  const ws = createWsClient({ url: wsUrl, connectionParams: { authorization }, lazy: true, retryAttempts: Infinity })
  return new Client({
    url: '/graphql',
    fetchOptions: { headers: { authorization } },
    // Network answers refresh what the cache shows (signed media URLs expire).
    requestPolicy: 'cache-and-network',
    exchanges: [
      cacheExchange({
        schema,
        keys,
        resolvers: {
          Conversation: { messages: relayPagination({ mergeMode: 'inwards' }) },
          Viewer: { conversations: relayPagination() },
        },
        updates: {
          Mutation: {
            sendMessage: (result, args, cache) => {
              const { edge } = (result as { sendMessage: { edge: { cursor: string; node: NewMessage } } }).sendMessage
              const input = args.input as { conversationId: string }
              appendMessage(cache, input.conversationId, edge.cursor, edge.node)
            },
          },
          Subscription: {
            conversationEvents: (result, args, cache) => {
              const event = result.conversationEvents as ConversationEventData
              const conversationId = args.conversationId as string
              if (event.__typename === 'MessageEvent' && (event as MessageEventData).kind === 'ADDED') {
                const { cursor, message } = event as MessageEventData
                appendMessage(cache, conversationId, cursor, message)
              }
              if (event.__typename === 'MessageStreamEvent') {
                noteStreamText(event as StreamEventData)
                writeStreamText(cache, event as StreamEventData)
              }
              if (event.__typename === 'ReadEvent')
                invalidateReceipts(cache, conversationId, (event as { lastReadSeq: number }).lastReadSeq)
            },
            // Hand-written cache logic 3: the list's order and membership are not in any event,
            // so a new or re-sorted conversation needs the first page again.
            inboxEvents: (result, _args, cache) => {
              const event = result.inboxEvents as { __typename: string; kind?: string }
              // Only a new message or a conversation's change moves the list; a streamed reply's
              // deltas, typing and presence do not, and refetching on each would race the live text.
              const movesList =
                event.__typename === 'MessageEvent'
                  ? event.kind === 'ADDED'
                  : event.__typename === 'ConversationUpdatedEvent' || event.__typename === 'ConversationJoinedEvent'
              if (!movesList) return
              const viewer = cache.resolve('Query', 'viewer') as string | null
              // Each cached list by its own arguments (the default one, the archived one):
              // invalidate without them names only a field asked for without any.
              for (const field of viewer ? cache.inspectFields(viewer) : [])
                if (field.fieldName === 'conversations') cache.invalidate(viewer, field.fieldName, field.arguments)
            },
          },
        },
      }),
      fetchExchange,
      subscriptionExchange({
        forwardSubscription: (request) => ({
          subscribe: (sink) => ({ unsubscribe: ws.subscribe({ ...request, query: request.query ?? '' }, sink) }),
        }),
      }),
    ],
  })
}
