import { setUserDeactivated } from '../domain/governance/index.ts'
import { builder } from './builder.ts'
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
}))
