import { isRecalled } from '../domain/policy/index.ts'
import { listReactionUsers, setReaction } from '../domain/interactions/index.ts'
import type { ReactionGroupRecord } from '../store/reactions.ts'
import { builder } from './builder.ts'
import { MessageRef } from './message.ts'
import { UserConnection } from './user.ts'

const ReactionGroupRef = builder.objectRef<ReactionGroupRecord>('ReactionGroup').implement({
  fields: (t) => ({
    emoji: t.exposeString('emoji', {
      description: 'One emoji (a single grapheme) or a :shortcode: of 1..32 [a-z0-9_+-]',
    }),
    count: t.exposeInt('count'),
    viewerReacted: t.exposeBoolean('viewerReacted'),
    firstReactedAt: t.field({ type: 'DateTime', resolve: (g) => g.firstReactedAt }),
    users: t.field({
      type: UserConnection,
      description: 'Earliest first',
      args: { first: t.arg.int(), after: t.arg.string() },
      resolve: (g, args, ctx) => listReactionUsers(ctx.loaders, g, args),
    }),
  }),
})

builder.objectField(MessageRef, 'reactions', (t) =>
  t.field({
    type: [ReactionGroupRef],
    description: 'Grouped by emoji, ordered by firstReactedAt; empty once recalled',
    resolve: async (m, _a, ctx) => (isRecalled(m) ? [] : ctx.loaders.reactions.load(m)),
  }),
)

builder.mutationFields((t) => {
  const authed = t.withAuth({ authenticated: true })
  const reacting = (add: boolean) =>
    authed.field({
      type: MessageRef,
      description: `Members who can see the message; idempotent. Each change takes a pts (MessageEvent REACTIONS_CHANGED).${add ? ' Limits: 20 distinct emoji a message, 3 a user a message (LIMIT_REACHED).' : ''}`,
      args: { messageId: t.arg.id({ required: true }), emoji: t.arg.string({ required: true }) },
      resolve: (_r, args, ctx) => setReaction(ctx.app, ctx.viewer, args.messageId, args.emoji, add),
    })
  return { addReaction: reacting(true), removeReaction: reacting(false) }
})
