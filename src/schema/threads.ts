import { listReplies } from '../domain/history/index.ts'
import { followThread, listThreads, loadThreadSummary, markThreadRead } from '../domain/threads/index.ts'
import type { ThreadSummaryRecord } from '../domain/threads/index.ts'
import { loadExisting } from '../domain/history/index.ts'
import type { EventPayload } from '../domain/live/index.ts'
import { messageGlobalId } from '../domain/core/index.ts'
import { builder } from './builder.ts'
import { viewerOf } from './context.ts'
import { MessageConnection, MessageRef } from './message.ts'
import { pageFields } from './pageFields.ts'
import { UserRef } from './user.ts'
import { ViewerRef } from './viewer.ts'

// Threads (docs/threads.md): replies are Messages of the conversation with a root.

const ThreadSummaryRef = builder.objectRef<ThreadSummaryRecord>('ThreadSummary').implement({
  description: "A root's thread as the viewer sees it",
  fields: (t) => ({
    replyCount: t.exposeInt('replyCount', { description: 'Replies the viewer may see' }),
    lastReplyAt: t.expose('lastReplyAt', { type: 'DateTime', nullable: true }),
    participants: t.field({
      type: [UserRef],
      description: 'Repliers only, the most recent first, at most 5',
      resolve: (s, _a, ctx) => loadExisting(ctx.loaders.users, s.participantIds),
    }),
    viewerFollowing: t.exposeBoolean('following'),
    viewerUnreadCount: t.int({
      description: "Others' replies after the viewer's read position in this thread (0 when not following)",
      resolve: (s) => (s.following ? s.unread : 0),
    }),
    viewerLastReadSeq: t.expose('lastReadSeq', { type: 'SafeInt' }),
  }),
})

builder.objectFields(MessageRef, (t) => ({
  thread: t.field({
    type: ThreadSummaryRef,
    nullable: true,
    description: 'On a root with at least one reply the viewer may see; null otherwise',
    resolve: (m, _a, ctx) => loadThreadSummary(ctx.loaders, m),
  }),
  threadRoot: t.field({
    type: MessageRef,
    nullable: true,
    description: 'On a reply; null on a top-level message',
    resolve: (m, _a, ctx) =>
      m.threadRootSeq === null
        ? null
        : ctx.loaders.messages.load({ conversationId: m.conversationId, seq: m.threadRootSeq }),
  }),
  inConversation: t.exposeBoolean('inConversation', {
    description: 'False for a reply not sent alsoInConversation',
  }),
  replies: t.field({
    type: MessageConnection,
    description: "A root's replies the viewer may see, ascending seq, paged like Conversation.messages",
    args: { first: t.arg.int(), after: t.arg.string(), last: t.arg.int(), before: t.arg.string() },
    resolve: (m, args, ctx, info) =>
      listReplies(ctx.app, viewerOf(ctx), ctx.loaders, m, args, pageFields(info.fragments, info.fieldNodes)),
  }),
}))

const ThreadEdge = builder.edgeObject({
  type: MessageRef,
  name: 'ThreadEdge',
  fields: (t) => ({ node: t.expose('node', { type: MessageRef, description: 'The root' }) }),
})
const ThreadConnection = builder.connectionObject({ type: MessageRef, name: 'ThreadConnection' }, ThreadEdge)

builder.objectFields(ViewerRef, (t) => ({
  threads: t.field({
    type: ThreadConnection,
    description: 'Followed threads, latest reply first',
    args: { first: t.arg.int(), after: t.arg.string(), unreadOnly: t.arg.boolean({ defaultValue: false }) },
    resolve: (v, args, ctx) => listThreads(ctx.app, v, args),
  }),
}))

/** The viewer's follow or read position of a thread changed (their other devices: viewerUpdates, sync). */
export const ThreadUpdatedEventRef = builder
  .objectRef<Extract<EventPayload, { typename: 'ThreadUpdatedEvent' }>>('ThreadUpdatedEvent')
  .implement({
    description: "The viewer's own follow or read position of a thread changed (for their other devices)",
    fields: (t) => ({
      rootId: t.id({ description: "The thread's root", resolve: (e) => messageGlobalId(e.root) }),
      root: t.field({
        type: MessageRef,
        nullable: true,
        description: 'Null when the viewer may no longer see it',
        resolve: (e, _a, ctx) => ctx.loaders.messages.load(e.root),
      }),
      following: t.exposeBoolean('following'),
      lastReadSeq: t.expose('lastReadSeq', { type: 'SafeInt' }),
    }),
  })

builder.mutationFields((t) => {
  const authed = t.withAuth({ authenticated: true })
  return {
    markThreadRead: authed.field({
      type: MessageRef,
      description: 'messageId: the root; default seq: its latest reply; never moves backwards',
      args: { messageId: t.arg.id({ required: true }), seq: t.arg({ type: 'SafeInt' }) },
      resolve: (_r, args, ctx) => markThreadRead(ctx.app, ctx.viewer, args.messageId, args.seq),
    }),
    followThread: authed.field({
      type: MessageRef,
      args: { messageId: t.arg.id({ required: true }), follow: t.arg.boolean({ required: true }) },
      resolve: (_r, args, ctx) => followThread(ctx.app, ctx.viewer, args.messageId, args.follow),
    }),
  }
})
