import {
  memberSearch,
  searchMessages,
  searchUsers,
  type MessageSearchConnection,
  type MessageSearchEdge,
} from '../domain/search/index.ts'
import type { TextRange } from '../domain/search/index.ts'
import { builder } from './builder.ts'
import { ConversationMemberRef, ConversationRef } from './conversation.ts'
import { MessageKindEnum } from './enums.ts'
import { MessageRef } from './message.ts'
import { UserConnection } from './user.ts'

const TextRangeRef = builder.objectRef<TextRange>('TextRange').implement({
  description: 'A span of a snippet in UTF-16 code units, as JavaScript strings count',
  fields: (t) => ({ start: t.exposeInt('start'), length: t.exposeInt('length') }),
})

const MessageSearchEdgeRef = builder.objectRef<MessageSearchEdge>('MessageSearchEdge').implement({
  fields: (t) => ({
    cursor: t.exposeString('cursor'),
    node: t.field({ type: MessageRef, resolve: (e) => e.node }),
    snippet: t.exposeString('snippet', {
      description: 'The first match with some context, at most 200 characters; an ellipsis marks a cut',
    }),
    highlights: t.field({
      type: [TextRangeRef],
      description: 'Each matched span inside the snippet',
      resolve: (e) => e.highlights,
    }),
  }),
})

const MessageSearchConnectionRef = builder.objectRef<MessageSearchConnection>('MessageSearchConnection').implement({
  fields: (t) => ({
    edges: t.field({ type: [MessageSearchEdgeRef], resolve: (c) => c.edges }),
    pageInfo: t.field({ type: builder.pageInfoRef(), resolve: (c) => c.pageInfo }),
  }),
})

const MessageSearchFilter = builder.inputType('MessageSearchFilter', {
  fields: (t) => ({
    conversationId: t.id(),
    senderId: t.id(),
    kinds: t.field({ type: [MessageKindEnum] }),
    sentAfter: t.field({ type: 'DateTime', description: 'Inclusive' }),
    sentBefore: t.field({ type: 'DateTime', description: 'Exclusive' }),
  }),
})

builder.queryFields((t) => {
  const authed = t.withAuth({ authenticated: true })
  return {
    searchMessages: authed.field({
      type: MessageSearchConnectionRef,
      description: 'Messages the viewer may see that hold every word of the query, newest first (docs/search.md)',
      args: {
        query: t.arg.string({ required: true }),
        filter: t.arg({ type: MessageSearchFilter }),
        first: t.arg.int(),
        after: t.arg.string(),
      },
      resolve: (_r, args, ctx) => searchMessages(ctx.app, ctx.viewer, args),
    }),
    searchUsers: authed.field({
      type: UserConnection,
      description: 'People by handle or display name, by display name (to start a private chat)',
      args: { query: t.arg.string({ required: true }), first: t.arg.int(), after: t.arg.string() },
      resolve: (_r, args, ctx) => searchUsers(ctx.app, args),
    }),
  }
})

builder.objectField(ConversationRef, 'memberSearch', (t) =>
  t.field({
    type: [ConversationMemberRef],
    description: 'The @ picker: current members whose handle or display name matches, by display name',
    args: { query: t.arg.string({ required: true }), first: t.arg.int() },
    resolve: (c, args, ctx) => memberSearch(ctx.app, c.conversation.id, args),
  }),
)
