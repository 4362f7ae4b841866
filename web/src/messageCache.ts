import type { Cache } from '@urql/exchange-graphcache'
import { graphql } from './gql/index.ts'

/** Cache logic Graphcache's normalization cannot do alone (listed in docs/clients.md). */

const AppendedEdge = graphql(`
  fragment AppendedEdge on MessageEdge {
    __typename
    cursor
    node {
      __typename
      id
    }
  }
`)

/** A new message joins the newest cached page of a connection: a conversation's messages or a root's replies. */
function appendEdge(
  cache: Cache,
  parent: { __typename: string; id: string },
  field: string,
  cursor: string,
  id: string,
) {
  cache.writeFragment(AppendedEdge, { __typename: 'MessageEdge', cursor, node: { __typename: 'Message', id } })
  const edgeKey = cache.keyOfEntity({ __typename: 'MessageEdge', node: { __typename: 'Message', id } })
  for (const page of cache.inspectFields(parent).filter((f) => f.fieldName === field)) {
    const connection = cache.resolve(parent, page.fieldKey) as string | null
    const edges = connection ? ((cache.resolve(connection, 'edges') as string[] | null) ?? []) : null
    if (!connection || !edges || page.arguments?.before || edges.includes(edgeKey!)) continue
    cache.link(connection, 'edges', [...edges, edgeKey])
  }
}

export type NewMessage = { id: string; inConversation?: boolean; threadRoot?: { id: string } | null }

/** A sent or live message: a thread reply joins its root's replies, and the history unless it stays in the thread. */
export function appendMessage(cache: Cache, conversationId: string, cursor: string, message: NewMessage) {
  if (message.threadRoot)
    appendEdge(cache, { __typename: 'Message', id: message.threadRoot.id }, 'replies', cursor, message.id)
  if (message.inConversation !== false)
    appendEdge(cache, { __typename: 'Conversation', id: conversationId }, 'messages', cursor, message.id)
}

const StreamedText = graphql(`
  fragment StreamedText on Message {
    __typename
    id
    status
    content {
      __typename
      ... on TextContent {
        text
      }
    }
  }
`)

/**
 * A MessageStreamEvent names its message and carries the text so far, not the message: write the
 * text into the cached message while it is still STREAMING (its STREAM_ENDED event settles it).
 */
export function writeStreamText(cache: Cache, event: { messageId: string; text: string }) {
  const message = { __typename: 'Message', id: event.messageId }
  if (cache.resolve(message, 'status') !== 'STREAMING') return
  cache.writeFragment(StreamedText, {
    __typename: 'Message',
    id: event.messageId,
    status: 'STREAMING',
    content: { __typename: 'TextContent', text: event.text },
  })
}
