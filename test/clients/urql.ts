import { Client, fetchExchange, gql, subscriptionExchange } from '@urql/core'
import { cacheExchange, type Cache, type Data, type KeyingConfig } from '@urql/exchange-graphcache'
import { relayPagination } from '@urql/exchange-graphcache/extras'
import { createClient } from 'graphql-ws'
import WebSocket from 'ws'
import schema from '../gql/urql-schema.ts'

/**
 * Object types without an id (pages, content kinds, payloads) are embedded in their parent. A message
 * edge is keyed by its message, so one that arrives with a mutation or an event can be linked into a page.
 */
const keys: KeyingConfig = {
  ...Object.fromEntries(
    schema.__schema.types
      .filter(
        (type) => type.kind === 'OBJECT' && !type.name.startsWith('__') && !type.fields.some((f) => f.name === 'id'),
      )
      .map((type) => [type.name, () => null]),
  ),
  MessageEdge: (edge) => (edge.node as { id?: string } | undefined)?.id ?? null,
}

type Edge = { __typename?: string; cursor: string; node: { __typename?: string; id: string } }

const EDGE = gql`
  fragment AppendedEdge on MessageEdge {
    cursor
    node {
      id
    }
  }
`

/** Appends a message edge to every cached page list of its conversation, unless it is listed already. */
function appendMessageEdge(cache: Cache, conversationId: string, edge: Edge) {
  const conversation = { __typename: 'Conversation', id: conversationId }
  // A MessageEvent carries the cursor and the message (already in the cache), not an edge: write one.
  cache.writeFragment(EDGE, {
    __typename: 'MessageEdge',
    cursor: edge.cursor,
    node: { __typename: 'Message', id: edge.node.id },
  })
  const edgeKey = cache.keyOfEntity({ ...edge, __typename: 'MessageEdge' })
  for (const field of cache.inspectFields(conversation).filter((f) => f.fieldName === 'messages')) {
    const connection = cache.resolve(conversation, field.fieldKey) as string | null
    const edges = connection && ((cache.resolve(connection, 'edges') as string[] | null) ?? [])
    // Only the newest page (no `before` cursor) grows at its end.
    if (!edges || field.arguments?.before || edges.includes(edgeKey!)) continue
    cache.link(connection, 'edges', [...edges, edgeKey])
  }
}

/** urql with Graphcache against Parley: HTTP for queries and mutations, graphql-ws for subscriptions. */
export function createUrqlClient(opts: { httpUrl: string; wsUrl: string; token: string; fetch?: typeof fetch }) {
  const authorization = `Bearer ${opts.token}`
  // In a browser, leave out webSocketImpl: graphql-ws uses the global WebSocket.
  const ws = createClient({ url: opts.wsUrl, connectionParams: { authorization }, webSocketImpl: WebSocket })
  return new Client({
    url: opts.httpUrl,
    fetch: opts.fetch,
    fetchOptions: { headers: { authorization } },
    exchanges: [
      cacheExchange({
        schema,
        keys,
        resolvers: {
          Conversation: { messages: relayPagination({ mergeMode: 'inwards' }), members: relayPagination() },
          Viewer: { conversations: relayPagination(), favorites: relayPagination(), reminders: relayPagination() },
        },
        updates: {
          Mutation: {
            sendMessage: (result: Data, args, cache) => {
              const { edge } = result.sendMessage as { edge: Edge }
              appendMessageEdge(cache, (args.input as { conversationId: string }).conversationId, edge)
            },
          },
          Subscription: {
            conversationEvents: (result: Data, args, cache) => {
              const event = result.conversationEvents as { kind?: string; cursor: string; message: Edge['node'] }
              if (event.kind === 'ADDED')
                appendMessageEdge(cache, args.conversationId as string, { cursor: event.cursor, node: event.message })
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
