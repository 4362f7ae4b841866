import { setConversationTitle, setPostingPolicy } from '../domain/members/index.ts'
import { blockUser, muteMember, unblockUser } from '../domain/members/index.ts'
import { builder } from './builder.ts'
import { ConversationMemberRef, ConversationRef, loadConversation } from './conversation.ts'
import { PostingPolicyEnum } from './enums.ts'

/** Conversation administration and personal blocking (docs/messages.md "Who may send"). */
builder.mutationFields((t) => {
  const authed = t.withAuth({ authenticated: true })
  return {
    blockUser: authed.boolean({
      description: 'The blocked user can no longer send to you in your private conversation (BLOCKED). Idempotent.',
      args: { userId: t.arg.id({ required: true }) },
      resolve: (_r, { userId }, ctx) => blockUser(ctx.app, ctx.viewer, userId),
    }),
    unblockUser: authed.boolean({
      description: 'Idempotent',
      args: { userId: t.arg.id({ required: true }) },
      resolve: (_r, { userId }, ctx) => unblockUser(ctx.app, ctx.viewer, userId),
    }),
    muteMember: authed.field({
      type: ConversationMemberRef,
      description: 'Group OWNER/ADMIN: the member cannot send until then (SENDER_MUTED); null until = unmute',
      args: {
        conversationId: t.arg.id({ required: true }),
        userId: t.arg.id({ required: true }),
        until: t.arg({ type: 'DateTime' }),
      },
      resolve: (_r, args, ctx) => muteMember(ctx.app, ctx.viewer, args.conversationId, args.userId, args.until ?? null),
    }),
    setPostingPolicy: authed.field({
      type: ConversationRef,
      description: 'Group OWNER/ADMIN: ADMINS makes it announcement-only; members see a NOTICE',
      args: {
        conversationId: t.arg.id({ required: true }),
        policy: t.arg({ type: PostingPolicyEnum, required: true }),
      },
      resolve: async (_r, args, ctx) =>
        loadConversation(ctx, await setPostingPolicy(ctx.app, ctx.viewer, args.conversationId, args.policy), {
          fresh: true,
        }),
    }),
    setConversationTitle: authed.field({
      type: ConversationRef,
      description: 'Group or channel OWNER/ADMIN; writes a TITLE_CHANGED system message',
      args: { conversationId: t.arg.id({ required: true }), title: t.arg.string({ required: true }) },
      resolve: async (_r, args, ctx) =>
        loadConversation(ctx, await setConversationTitle(ctx.app, ctx.viewer, args.conversationId, args.title), {
          fresh: true,
        }),
    }),
  }
})
