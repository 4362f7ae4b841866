import { sync, type SyncBatch } from '../domain/sync/index.ts'
import { openViewerUpdates, type ViewerUpdateDelivery } from '../domain/live/index.ts'
import { encodeGlobalId } from '../domain/core/index.ts'
import { builder } from './builder.ts'
import { viewerOf } from './context.ts'
import { ConversationRef } from './conversation.ts'
import { deliver, InboxEventUnion, MessageActionEventRef, type InboxPayload } from './subscription.ts'
import { takeSyncToken } from './syncToken.ts'
import { ViewerRef } from './viewer.ts'
import { ThreadUpdatedEventRef } from './threads.ts'

const SyncBatchRef = builder.objectRef<SyncBatch>('SyncBatch').implement({
  description: 'What changed for the viewer after a sync token, oldest change first',
  fields: (t) => ({
    token: t.string({
      description: 'Pass it as `since` next; unchanged when nothing changed',
      resolve: (b) => b.token,
    }),
    hasMore: t.boolean({
      description: 'More changes follow: call sync again with `token` at once',
      resolve: (b) => b.hasMore,
    }),
    conversations: t.field({
      type: [ConversationRef],
      description:
        "Joined, or changed: messages (see lastPts, then Conversation.changes), title, members, or the viewer's read position, settings or draft",
      resolve: (b, _a, ctx) => {
        for (const access of b.conversations) ctx.loaders.conversations.prime(access.conversation.id, access)
        return b.conversations
      },
    }),
    removedConversationIds: t.idList({
      description: 'The viewer left, was removed, or unsubscribed',
      resolve: (b) => b.removedConversationIds.map((id) => encodeGlobalId('Conversation', id)),
    }),
    messageStates: t.field({
      type: [MessageActionEventRef],
      description: "The viewer's per-message states that changed (deleted/restored for me, favourite, reminder)",
      resolve: (b) => b.messageStates.map((s) => ({ typename: 'MessageActionEvent' as const, ...s })),
    }),
    threadStates: t.field({
      type: [ThreadUpdatedEventRef],
      description: "The viewer's thread states that changed (following, thread read position), each thread once",
      resolve: (b) => b.threadStates.map((s) => ({ typename: 'ThreadUpdatedEvent' as const, ...s })),
    }),
  }),
})

builder.objectField(ViewerRef, 'syncToken', (t) =>
  t.string({
    description:
      'A position in everything that changed for the viewer: read it with (or before) the state it stands for, then pass it to sync or viewerUpdates',
    resolve: (_v, _a, ctx) => takeSyncToken(ctx),
  }),
)

builder.queryField('sync', (t) =>
  t.withAuth({ authenticated: true }).field({
    type: SyncBatchRef,
    description: 'Everything that changed for the viewer after `since`, oldest first, in batches (first: 1..500)',
    args: { since: t.arg.string({ required: true }), first: t.arg.int({ defaultValue: 100 }) },
    resolve: (_r, args, ctx) => sync(ctx.app, ctx.viewer, args.since, args.first),
  }),
)

type ViewerUpdate = { token: string; event: InboxPayload }

const ViewerUpdateRef = builder.objectRef<ViewerUpdate>('ViewerUpdate').implement({
  fields: (t) => ({
    // Exposed, not resolved: graphql-jit reads them inline, once per payload of a long difference.
    token: t.exposeString('token', {
      description: 'The token after this event: resume viewerUpdates (or sync) with it',
    }),
    event: t.expose('event', { type: InboxEventUnion }),
  }),
})

builder.subscriptionField('viewerUpdates', (t) =>
  t.field({
    type: ViewerUpdateRef,
    description:
      'The account stream: with `since`, first the sync difference (ConversationUpdatedEvent, ConversationRemovedEvent, MessageActionEvent, FriendshipEvent, ThreadUpdatedEvent), then every live InboxEvent; each payload carries the token after it',
    args: { since: t.arg.string() },
    subscribe: (_root, args, ctx) => openViewerUpdates(ctx.app, viewerOf(ctx), args.since),
    resolve: (update: ViewerUpdateDelivery, _args, ctx) => ({
      token: update.token,
      event: deliver<InboxPayload['typename']>(update.delivery, ctx),
    }),
  }),
)
