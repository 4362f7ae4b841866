import { listConversationChanges, type ChangeBatch } from '../domain/history/index.ts'
import { editMessage, recallMessage } from '../domain/lifecycle/index.ts'
import { shownEdits } from '../domain/policy/index.ts'
import type { MessageEditRecord } from '../store/lifecycle.ts'
import type { MessageKind } from '../store/records.ts'
import { builder } from './builder.ts'
import { MessageContentUnion } from './content.ts'
import { MessageContentInput } from './contentInput.ts'
import { viewerOf } from './context.ts'
import { ConversationRef } from './conversation.ts'
import { MessageRef } from './message.ts'

const MessageEditRef = builder.objectRef<MessageEditRecord & { kind: MessageKind }>('MessageEdit').implement({
  description:
    'An earlier version of a message; editedAt is when that version was written (the first one: when it was sent)',
  fields: (t) => ({
    version: t.exposeInt('version'),
    content: t.field({
      type: MessageContentUnion,
      resolve: (e) => ({ kind: e.kind, data: e.content as Record<string, unknown> }),
    }),
    editedAt: t.field({ type: 'DateTime', resolve: (e) => e.editedAt }),
  }),
})

builder.objectField(MessageRef, 'edits', (t) =>
  t.field({
    type: [MessageEditRef],
    description: 'Earlier versions, oldest first; empty once RECALLED',
    resolve: async (m, _a, ctx) => shownEdits(m, await ctx.loaders.edits.load(m)).map((e) => ({ ...e, kind: m.kind })),
  }),
)

const ChangeBatchRef = builder.objectRef<ChangeBatch>('ChangeBatch').implement({
  fields: (t) => ({
    messages: t.field({ type: [MessageRef], resolve: (b) => b.messages }),
    lastPts: t.field({ type: 'SafeInt', description: 'Pass as sincePts next', resolve: (b) => b.lastPts }),
    hasMore: t.exposeBoolean('hasMore'),
  }),
})

builder.objectField(ConversationRef, 'changes', (t) =>
  t.field({
    type: ChangeBatchRef,
    description:
      'Gap-free catch-up: every message created, edited, recalled or reacted to after sincePts, once, in its latest state, ascending by pts. first is 1..100.',
    args: { sincePts: t.arg({ type: 'SafeInt', required: true }), first: t.arg.int({ defaultValue: 100 }) },
    resolve: (c, args, ctx) => listConversationChanges(ctx.app, viewerOf(ctx), c.conversation, args),
  }),
)

builder.mutationFields((t) => {
  const authed = t.withAuth({ authenticated: true })
  return {
    editMessage: authed.field({
      type: MessageRef,
      description: 'Sender only; TEXT only; not once recalled. The earlier version is kept in edits.',
      args: { messageId: t.arg.id({ required: true }), content: t.arg({ type: MessageContentInput, required: true }) },
      resolve: (_r, args, ctx) => editMessage(ctx.app, ctx.viewer, args.messageId, args.content),
    }),
    recallMessage: authed.field({
      type: MessageRef,
      description:
        'The sender within the recall window (default 2 min), or a group OWNER/ADMIN any time. Recalling again returns the tombstone.',
      args: { messageId: t.arg.id({ required: true }) },
      resolve: (_r, args, ctx) => recallMessage(ctx.app, ctx.viewer, args.messageId),
    }),
  }
})
