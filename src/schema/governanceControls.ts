import { removeMessage, setUserDeactivated } from '../domain/governance/index.ts'
import { builder } from './builder.ts'
import { MessageRef } from './message.ts'
import { UserRef } from './user.ts'

builder.mutationFields((t) => ({
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
