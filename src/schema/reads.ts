import { listReaders, markConversationRead, receiptOf, unreadTotal, type Receipt } from '../domain/reads/index.ts'
import { builder } from './builder.ts'
import { viewerOf, type Context } from './context.ts'
import { ConversationMemberRef, ConversationRef, loadConversation } from './conversation.ts'
import { MessageRef } from './message.ts'
import { UserConnection } from './user.ts'
import { ViewerRef } from './viewer.ts'

/** Read state, unread counts and read receipts (docs/read-state.md). */

const unreadCounts = (ctx: Context, conversationId: number) => ctx.loaders.unreadCounts.load(conversationId)

builder.objectFields(ConversationRef, (t) => ({
  unreadCount: t.int({
    description:
      "Others' non-system, non-recalled messages after the viewer's read position that the viewer can see (not deleted for them)",
    resolve: async (c, _a, ctx) => (await unreadCounts(ctx, c.conversation.id)).unread,
  }),
  mentionedUnreadCount: t.int({
    description: 'The unread ones that mention the viewer or @all',
    resolve: async (c, _a, ctx) => (await unreadCounts(ctx, c.conversation.id)).mentioned,
  }),
}))

builder.objectField(ViewerRef, 'unreadTotal', (t) =>
  t.int({
    description:
      'The sum of unreadCount over current conversations not in do-not-disturb; a markedUnread one with nothing unread counts 1',
    resolve: (v, _a, ctx) => unreadTotal(ctx.app, v),
  }),
)

const MessageReceiptRef = builder.objectRef<Receipt>('MessageReceipt')
const receiptCounts = (ctx: Context, r: Receipt) => ctx.loaders.receiptCounts.load(r)

MessageReceiptRef.implement({
  description: "Who has read one of the viewer's own messages: current members other than the sender who can see it",
  fields: (t) => ({
    readByPeer: t.boolean({
      nullable: true,
      description: 'PRIVATE: has the other side read it; null for groups',
      resolve: async (r, _a, ctx) => (r.type === 'PRIVATE' ? (await receiptCounts(ctx, r)).read > 0 : null),
    }),
    readCount: t.int({
      description: 'Members other than the sender whose lastReadSeq >= seq',
      resolve: async (r, _a, ctx) => (await receiptCounts(ctx, r)).read,
    }),
    unreadCount: t.int({ resolve: async (r, _a, ctx) => (await receiptCounts(ctx, r)).unread }),
    readers: t.field({
      type: UserConnection,
      description: 'read: true (default) lists who has read it, false who has not; ordered by user',
      args: { read: t.arg.boolean({ defaultValue: true }), first: t.arg.int(), after: t.arg.string() },
      resolve: (r, args, ctx) => listReaders(ctx.app, r, args),
    }),
  }),
})

builder.objectField(MessageRef, 'receipt', (t) =>
  t.field({
    type: MessageReceiptRef,
    nullable: true,
    description: "Only on the viewer's own messages; null when receipts are switched off, and in channels",
    resolve: async (m, _a, ctx) =>
      receiptOf(ctx.app.settings, viewerOf(ctx), m, (await loadConversation(ctx, m.conversationId)).conversation.type),
  }),
)

builder.mutationField('markConversationRead', (t) =>
  t.withAuth({ authenticated: true }).field({
    type: ConversationMemberRef,
    description:
      'Default: lastSeq; clamped to lastSeq; never moves backwards (an older seq is a no-op). Clears viewerSettings.markedUnread',
    args: { conversationId: t.arg.id({ required: true }), seq: t.arg({ type: 'SafeInt' }) },
    resolve: (_r, args, ctx) => markConversationRead(ctx.app, ctx.viewer, args.conversationId, args.seq),
  }),
)
