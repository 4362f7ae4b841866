import { removeMessage, setLegalHold, setRetention, setUserDeactivated } from '../domain/governance/index.ts'
import { builder } from './builder.ts'
import { ConversationRef } from './conversation.ts'
import { MessageRef } from './message.ts'
import { UserRef } from './user.ts'

builder.objectFields(ConversationRef, (t) => ({
  retentionSeconds: t.int({
    nullable: true,
    description: 'How long messages are kept; null = the server default (RETENTION_SECONDS)',
    resolve: (c) => c.conversation.retentionSeconds,
  }),
  retainedFromSeq: t.field({
    type: 'SafeInt',
    description: 'The oldest seq that may still exist (1 until a retention sweep deletes)',
    resolve: (c) => c.conversation.retainedFromSeq,
  }),
  legalHold: t.boolean({
    description: 'Nothing is deleted by retention and recalls erase nothing while set',
    resolve: (c) => c.conversation.legalHold,
  }),
}))

builder.mutationFields((t) => ({
  setRetention: t.withAuth({ authenticated: true }).field({
    type: ConversationRef,
    description: "A group's OWNER, or operators: seconds >= RETENTION_MIN_SECONDS, or null for the server default",
    args: { conversationId: t.arg.id({ required: true }), seconds: t.arg.int() },
    resolve: (_r, args, ctx) => setRetention(ctx.app, ctx.viewer, args.conversationId, args.seconds ?? null),
  }),
  setLegalHold: t.withAuth({ operator: true }).field({
    type: ConversationRef,
    description: 'Operators only: no retention deletes and no erasure while held',
    args: { conversationId: t.arg.id({ required: true }), hold: t.arg.boolean({ required: true }) },
    resolve: (_r, args, ctx) => setLegalHold(ctx.app, ctx.viewer, args.conversationId, args.hold),
  }),
  deactivateUser: t.withAuth({ operator: true }).field({
    type: UserRef,
    description: 'Operators only: every token of the user is refused at once, on every instance; their sockets close',
    args: { userId: t.arg.id({ required: true }) },
    resolve: (_r, { userId }, ctx) => setUserDeactivated(ctx.app, ctx.viewer, userId, true),
  }),
  reactivateUser: t.withAuth({ operator: true }).field({
    type: UserRef,
    description: 'Operators only: undoes deactivateUser (their tokens work again)',
    args: { userId: t.arg.id({ required: true }) },
    resolve: (_r, { userId }, ctx) => setUserDeactivated(ctx.app, ctx.viewer, userId, false),
  }),
  removeMessage: t.withAuth({ operator: true }).field({
    type: MessageRef,
    description: 'Operators only: takes the message down (status REMOVED, a pts, MessageEvent RECALLED)',
    args: { messageId: t.arg.id({ required: true }), reason: t.arg.string({ required: true }) },
    resolve: (_r, args, ctx) => removeMessage(ctx.app, ctx.viewer, args.messageId, args.reason),
  }),
}))
