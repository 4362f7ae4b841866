import { requireMember } from '../domain/policy/index.ts'
import { requireMemberOrOperator, viewerMembership } from '../domain/policy/index.ts'
import * as conversations from '../domain/members/index.ts'
import { prefetchMessages } from '../domain/history/index.ts'
import { listConversationMembers } from '../domain/history/index.ts'
import { receiptsVisible } from '../domain/reads/index.ts'
import { parseId } from '../domain/core/index.ts'
import type { ConversationAccess } from '../store/conversations.ts'
import type { MemberRecord } from '../store/records.ts'
import { builder } from './builder.ts'
import { viewerOf, type Context } from './context.ts'
import { ConversationTypeEnum, HistoryVisibilityEnum, MemberRoleEnum, PostingPolicyEnum } from './enums.ts'
import { childField } from './lookahead.ts'
import { pageFields } from './pageFields.ts'
import { UserRef } from './user.ts'

/** A conversation as one viewer sees it: the row plus the viewer's membership. */
export const ConversationRef = builder.objectRef<ConversationAccess>('Conversation')
export const ConversationMemberRef = builder.objectRef<MemberRecord>('ConversationMember')
const ConversationMemberConnection = builder.connectionObject({
  type: ConversationMemberRef,
  name: 'ConversationMemberConnection',
})

/** Loads a conversation the viewer is a member of, else NOT_FOUND. `fresh` skips the request cache (after a write). */
export async function loadConversation(
  ctx: Context,
  id: number,
  opts: { fresh?: boolean } = {},
): Promise<ConversationAccess> {
  if (opts.fresh) ctx.loaders.conversations.clear(id)
  return requireMember(await ctx.loaders.conversations.load(id))
}

/** The conversation of a message the viewer holds: as a member, or in an operator's view (decision 0014). */
export async function loadConversationOfMessage(ctx: Context, id: number): Promise<ConversationAccess> {
  return requireMemberOrOperator(await ctx.loaders.conversations.load(id), viewerOf(ctx))
}

builder.node(ConversationRef, {
  id: { resolve: (c) => c.conversation.id },
  isTypeOf: (v) => typeof v === 'object' && v !== null && 'conversation' in v,
  fields: (t) => ({
    type: t.field({ type: ConversationTypeEnum, resolve: (c) => c.conversation.type }),
    title: t.string({ nullable: true, resolve: (c) => c.conversation.title }),
    historyVisibility: t.field({ type: HistoryVisibilityEnum, resolve: (c) => c.conversation.historyVisibility }),
    postingPolicy: t.field({ type: PostingPolicyEnum, resolve: (c) => c.conversation.postingPolicy }),
    createdAt: t.field({ type: 'DateTime', resolve: (c) => c.conversation.createdAt }),
    lastSeq: t.field({
      type: 'SafeInt',
      description: 'Highest message seq allocated in this conversation',
      resolve: (c) => c.conversation.lastSeq,
    }),
    lastPts: t.field({
      type: 'SafeInt',
      description: 'Highest change number (send, edit, recall and reaction change each take one)',
      resolve: (c) => c.conversation.lastPts,
    }),
    lastActivityAt: t.field({ type: 'DateTime', resolve: (c) => c.conversation.lastActivityAt }),
    peer: t.field({
      type: UserRef,
      nullable: true,
      description: 'PRIVATE only: the other participant (null in an operator view)',
      resolve: (c, _args, ctx) =>
        c.conversation.type === 'PRIVATE' && c.member ? ctx.loaders.peers.load(c.conversation.id) : null,
    }),
    viewerMember: t.field({
      type: ConversationMemberRef,
      description: "The viewer's own membership and read position",
      resolve: (c) => viewerMembership(c),
    }),
    members: t.field({
      type: ConversationMemberConnection,
      args: { first: t.arg.int(), after: t.arg.string() },
      resolve: (c, args, ctx) => listConversationMembers(ctx.app, c.conversation.id, args),
    }),
  }),
})

builder.node(ConversationMemberRef, {
  id: { resolve: (m) => `${m.conversationId}:${m.userId}` },
  isTypeOf: (v) => typeof v === 'object' && v !== null && 'visibleFromSeq' in v && 'role' in v,
  fields: (t) => ({
    conversation: t.field({ type: ConversationRef, resolve: (m, _a, ctx) => loadConversation(ctx, m.conversationId) }),
    user: t.field({ type: UserRef, resolve: async (m, _args, ctx) => (await ctx.loaders.users.load(m.userId))! }),
    role: t.field({ type: MemberRoleEnum, resolve: (m) => m.role }),
    joinedAt: t.field({ type: 'DateTime', resolve: (m) => m.joinedAt }),
    lastReadSeq: t.field({
      type: 'SafeInt',
      description:
        "Another member's position shows only where read receipts are on for this conversation type (else 0)",
      resolve: async (m, _a, ctx) => {
        if (m.userId === viewerOf(ctx).userId) return m.lastReadSeq
        const access = await ctx.loaders.conversations.load(m.conversationId)
        return access && receiptsVisible(ctx.app.settings, access.conversation.type) ? m.lastReadSeq : 0
      },
    }),
    mutedUntil: t.field({ type: 'DateTime', nullable: true, resolve: (m) => m.mutedUntil }),
  }),
})

// The edge's node exposed, as MessageEdge's: graphql-jit reads it inline, one resolver call fewer per conversation of an inbox page.
const ConversationEdge = builder.edgeObject({
  type: ConversationRef,
  name: 'ConversationEdge',
  fields: (t) => ({ node: t.expose('node', { type: ConversationRef }) }),
})
export const ConversationConnection = builder.connectionObject(
  { type: ConversationRef, name: 'ConversationConnection' },
  ConversationEdge,
)

builder.queryField('conversation', (t) =>
  t.withAuth({ authenticated: true }).field({
    type: ConversationRef,
    nullable: true,
    description: 'NOT_FOUND when it does not exist or the viewer is not a member',
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_root, { id }, ctx, info) => {
      const conversationId = parseId(id, 'Conversation')
      // A page of its messages asked for too: one statement for both (domain/history/history.ts).
      const messages = childField(info, 'messages')
      if (messages)
        await prefetchMessages(
          ctx.app,
          viewerOf(ctx),
          ctx.loaders,
          conversationId,
          messages.args,
          pageFields(info.fragments, [messages.node]),
        )
      return loadConversation(ctx, conversationId)
    },
  }),
)

const CreateGroupInput = builder.inputType('CreateGroupInput', {
  fields: (t) => ({
    title: t.string({ required: true }),
    memberIds: t.idList({ required: true }),
    historyVisibility: t.field({ type: HistoryVisibilityEnum, defaultValue: 'JOINED' }),
  }),
})

/** Mutations that answer with the conversation re-read after the write. */
builder.mutationFields((t) => {
  const authed = t.withAuth({ authenticated: true })
  const returning = (id: number, ctx: Context) => loadConversation(ctx, id, { fresh: true })
  return {
    openPrivateConversation: authed.field({
      type: ConversationRef,
      description: 'Idempotent: the same pair gets the same conversation',
      args: { userId: t.arg.id({ required: true }) },
      resolve: async (_r, { userId }, ctx) =>
        returning(await conversations.openPrivateConversation(ctx.app, ctx.viewer, userId), ctx),
    }),
    createGroup: authed.field({
      type: ConversationRef,
      args: { input: t.arg({ type: CreateGroupInput, required: true }) },
      resolve: async (_r, { input }, ctx) =>
        returning(await conversations.createGroup(ctx.app, ctx.viewer, input), ctx),
    }),
    addGroupMembers: authed.field({
      type: ConversationRef,
      args: { conversationId: t.arg.id({ required: true }), userIds: t.arg.idList({ required: true }) },
      resolve: async (_r, args, ctx) =>
        returning(await conversations.addGroupMembers(ctx.app, ctx.viewer, args.conversationId, args.userIds), ctx),
    }),
    removeGroupMember: authed.field({
      type: ConversationRef,
      args: { conversationId: t.arg.id({ required: true }), userId: t.arg.id({ required: true }) },
      resolve: async (_r, args, ctx) =>
        returning(await conversations.removeGroupMember(ctx.app, ctx.viewer, args.conversationId, args.userId), ctx),
    }),
    leaveConversation: authed.boolean({
      args: { conversationId: t.arg.id({ required: true }) },
      resolve: (_r, args, ctx) => conversations.leaveConversation(ctx.app, ctx.viewer, args.conversationId),
    }),
    setMemberRole: authed.field({
      type: ConversationMemberRef,
      args: {
        conversationId: t.arg.id({ required: true }),
        userId: t.arg.id({ required: true }),
        role: t.arg({ type: MemberRoleEnum, required: true }),
      },
      resolve: (_r, args, ctx) =>
        conversations.setMemberRole(ctx.app, ctx.viewer, args.conversationId, args.userId, args.role),
    }),
    createChannel: authed.field({
      type: ConversationRef,
      description: 'Operators only',
      args: { title: t.arg.string({ required: true }) },
      resolve: async (_r, { title }, ctx) =>
        returning(await conversations.createChannel(ctx.app, ctx.viewer, title), ctx),
    }),
    subscribeChannel: authed.field({
      type: ConversationRef,
      args: { conversationId: t.arg.id({ required: true }) },
      resolve: async (_r, args, ctx) =>
        returning(await conversations.subscribeChannel(ctx.app, ctx.viewer, args.conversationId), ctx),
    }),
    unsubscribeChannel: authed.boolean({
      args: { conversationId: t.arg.id({ required: true }) },
      resolve: (_r, args, ctx) => conversations.unsubscribeChannel(ctx.app, ctx.viewer, args.conversationId),
    }),
  }
})
