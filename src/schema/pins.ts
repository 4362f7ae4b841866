import { setPinned } from '../domain/interactions/index.ts'
import type { PinRecord } from '../store/pins.ts'
import { builder } from './builder.ts'
import { ConversationRef, loadConversation } from './conversation.ts'
import { MessageRef } from './message.ts'
import { UserRef } from './user.ts'

const PinnedMessageRef = builder.objectRef<PinRecord>('PinnedMessage').implement({
  fields: (t) => ({
    message: t.field({ type: MessageRef, resolve: (p) => p.message }),
    pinnedBy: t.field({ type: UserRef, resolve: async (p, _a, ctx) => (await ctx.loaders.users.load(p.pinnedById))! }),
    pinnedAt: t.field({ type: 'DateTime', resolve: (p) => p.pinnedAt }),
  }),
})

builder.objectField(ConversationRef, 'pinnedMessages', (t) =>
  t.field({
    type: [PinnedMessageRef],
    description: 'Newest pin first; only messages the viewer may see; recalled ones drop out',
    resolve: (c, _a, ctx) => ctx.loaders.pins.load(c.conversation.id),
  }),
)

builder.mutationFields((t) => {
  const authed = t.withAuth({ authenticated: true })
  const pinning = (pin: boolean) =>
    authed.field({
      type: ConversationRef,
      description: `GROUP/CHANNEL: OWNER or ADMIN; PRIVATE: either member. Writes a SYSTEM ${pin ? 'MESSAGE_PINNED' : 'MESSAGE_UNPINNED'} message; idempotent.${pin ? ' Past PINNED_MESSAGES_LIMIT: LIMIT_REACHED.' : ''}`,
      args: { messageId: t.arg.id({ required: true }) },
      resolve: async (_r, { messageId }, ctx) =>
        loadConversation(ctx, await setPinned(ctx.app, ctx.viewer, messageId, pin), { fresh: true }),
    })
  return { pinMessage: pinning(true), unpinMessage: pinning(false) }
})
