import type { Viewer } from '../domain/core/index.ts'
import { listConversations } from '../domain/history/index.ts'
import { encodeGlobalId } from '../domain/core/index.ts'
import { builder } from './builder.ts'
import { ConversationConnection } from './conversation.ts'
import { ConversationTypeEnum } from './enums.ts'
import { prepareSyncToken } from './syncToken.ts'
import { UserRef } from './user.ts'

export const ViewerRef = builder.objectRef<Viewer>('Viewer')

builder.objectType(ViewerRef, {
  fields: (t) => ({
    id: t.id({
      description: 'Stable per user, so normalized caches merge every viewer selection',
      resolve: (v) => encodeGlobalId('Viewer', v.userId),
    }),
    user: t.field({ type: UserRef, resolve: async (v, _a, ctx) => (await ctx.loaders.users.load(v.userId))! }),
    isOperator: t.exposeBoolean('isOperator'),
    conversations: t.field({
      type: ConversationConnection,
      description:
        'Pinned first (most recently pinned first), then most recent activity first; archived conversations only with archived: true',
      args: {
        first: t.arg.int(),
        after: t.arg.string(),
        type: t.arg({ type: ConversationTypeEnum }),
        archived: t.arg.boolean({ defaultValue: false }),
      },
      resolve: async (v, args, ctx) => {
        const page = await listConversations(ctx.app, v, args)
        for (const { node } of page.edges) ctx.loaders.conversations.prime(node.conversation.id, node)
        return page
      },
    }),
  }),
})

builder.queryField('viewer', (t) =>
  t.withAuth({ authenticated: true }).field({
    type: ViewerRef,
    resolve: async (_r, _a, ctx, info) => {
      await prepareSyncToken(ctx, info)
      return ctx.viewer
    },
  }),
)
