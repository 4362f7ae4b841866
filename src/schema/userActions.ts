import { shownViewerState } from '../domain/policy/index.ts'
import {
  deleteMessagesForMe,
  listFavorites,
  listReminders,
  restoreMessagesForMe,
  setFavorite,
  setReminder,
} from '../domain/lifecycle/index.ts'
import type { ViewerState } from '../store/userActions.ts'
import { builder } from './builder.ts'
import { MessageConnection, MessageRef } from './message.ts'
import { ViewerRef } from './viewer.ts'

const MessageViewerStateRef = builder.objectRef<ViewerState>('MessageViewerState').implement({
  description: "The viewer's own marks on a message (none on a recalled one)",
  fields: (t) => ({
    favorite: t.exposeBoolean('favorite'),
    remindAt: t.field({ type: 'DateTime', nullable: true, resolve: (s) => s.remindAt }),
  }),
})

builder.objectField(MessageRef, 'viewerState', (t) =>
  t.field({
    type: MessageViewerStateRef,
    resolve: async (m, _a, ctx) => shownViewerState(m, await ctx.loaders.viewerStates.load(m)),
  }),
)

builder.objectFields(ViewerRef, (t) => ({
  favorites: t.field({
    type: MessageConnection,
    description: 'Most recently favourited first; recalled and deleted-for-me messages are left out',
    args: { first: t.arg.int(), after: t.arg.string() },
    resolve: (v, args, ctx) => listFavorites(ctx.app, v, args),
  }),
  reminders: t.field({
    type: MessageConnection,
    description: 'Soonest first, fired ones included until cleared; recalled and deleted-for-me messages are left out',
    args: { first: t.arg.int(), after: t.arg.string(), dueBefore: t.arg({ type: 'DateTime' }) },
    resolve: (v, args, ctx) => listReminders(ctx.app, v, args),
  }),
}))

builder.mutationFields((t) => {
  const authed = t.withAuth({ authenticated: true })
  const messageIds = t.arg.idList({
    required: true,
    description: '1..100 ids; any the viewer cannot see makes the whole call NOT_FOUND',
  })
  return {
    deleteMessagesForMe: authed.idList({
      description: 'Hides the messages for the viewer only; answers the ids, once each',
      args: { messageIds },
      resolve: (_r, args, ctx) => deleteMessagesForMe(ctx.app, ctx.viewer, args.messageIds),
    }),
    restoreMessagesForMe: authed.idList({
      description: 'Brings back messages the viewer deleted; answers the ids, once each',
      args: { messageIds },
      resolve: (_r, args, ctx) => restoreMessagesForMe(ctx.app, ctx.viewer, args.messageIds),
    }),
    setFavorite: authed.field({
      type: MessageRef,
      args: { messageId: t.arg.id({ required: true }), favorite: t.arg.boolean({ required: true }) },
      resolve: (_r, args, ctx) => setFavorite(ctx.app, ctx.viewer, args.messageId, args.favorite),
    }),
    setReminder: authed.field({
      type: MessageRef,
      description: 'null clears; a time in the past fires at once. Each reminder set fires once.',
      args: { messageId: t.arg.id({ required: true }), remindAt: t.arg({ type: 'DateTime' }) },
      resolve: (_r, args, ctx) => setReminder(ctx.app, ctx.viewer, args.messageId, args.remindAt ?? null),
    }),
  }
})
