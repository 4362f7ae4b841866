import { pressCardAction, updateCard } from '../domain/cards/index.ts'
import { builder } from './builder.ts'
import { CardActionInput } from './contentInput.ts'
import { MessageRef } from './message.ts'

builder.mutationFields((t) => ({
  updateCard: t.withAuth({ authenticated: true }).field({
    type: MessageRef,
    description:
      "The card's sender (for a SYSTEM card: operators) replaces its data (and actions when given): a pts and an EDITED event, but no edit version and status unchanged",
    args: {
      messageId: t.arg.id({ required: true }),
      data: t.arg({ type: 'JSON', required: true }),
      actions: t.arg({ type: [CardActionInput] }),
    },
    resolve: (_r, args, ctx) => updateCard(ctx.app, ctx.viewer, { ...args, actions: args.actions ?? undefined }),
  }),
  pressCardAction: t.withAuth({ authenticated: true }).field({
    type: MessageRef,
    description:
      "Records the viewer's choice on a card (one per user: the same id again is a no-op, another replaces it); delivered as card.action to the sender's webhooks",
    args: {
      messageId: t.arg.id({ required: true }),
      actionId: t.arg.string({ required: true }),
      value: t.arg({ type: 'JSON' }),
    },
    resolve: (_r, args, ctx) => pressCardAction(ctx.app, ctx.viewer, args),
  }),
}))
