import { saveDraft, updateConversationSettings } from '../domain/members/index.ts'
import { inDoNotDisturb } from '../domain/live/index.ts'
import { loadExisting } from '../domain/history/index.ts'
import { noSettings, type DraftRecord, type SettingsRecord } from '../store/conversationSettings.ts'
import { builder } from './builder.ts'
import type { Context } from './context.ts'
import { ConversationRef, loadConversation } from './conversation.ts'
import { MessageRef } from './message.ts'
import { UserRef } from './user.ts'
import { MentionRangeInput, MentionRangeRef } from './mentionRanges.ts'

/** The viewer's own state of a conversation, the same on each of their devices (docs/conversations.md). */

type DraftView = DraftRecord & { conversationId: number }

const DraftRef = builder.objectRef<DraftView>('Draft').implement({
  description: 'The unsent text; sending a message in the conversation clears it',
  fields: (t) => ({
    text: t.string({ resolve: (d) => d.text }),
    quotedMessage: t.field({
      type: MessageRef,
      nullable: true,
      description: 'Null when the viewer can no longer see it',
      resolve: (d, _a, ctx) =>
        d.quotedSeq === null ? null : ctx.loaders.messages.load({ conversationId: d.conversationId, seq: d.quotedSeq }),
    }),
    mentions: t.field({ type: [UserRef], resolve: (d, _a, ctx) => loadExisting(ctx.loaders.users, d.mentionUserIds) }),
    mentionRanges: t.field({
      type: [MentionRangeRef],
      description: 'Where the mentions stand in text, as TextContent.mentionRanges (UTF-16 units)',
      resolve: (d) => d.mentionRanges,
    }),
    updatedAt: t.field({ type: 'DateTime', resolve: (d) => d.updatedAt }),
  }),
})

const ConversationSettingsRef = builder.objectRef<SettingsRecord>('ConversationSettings').implement({
  fields: (t) => ({
    doNotDisturbUntil: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'Do not disturb until then (a time in the past is off); null = off',
      resolve: (s) => s.doNotDisturbUntil,
    }),
    doNotDisturb: t.boolean({
      description: 'now < doNotDisturbUntil',
      resolve: (s) => inDoNotDisturb(s.doNotDisturbUntil, new Date()),
    }),
    pinnedAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: "Pinned to the top of the viewer's list",
      resolve: (s) => s.pinnedAt,
    }),
    archived: t.boolean({
      description: 'Out of the default list; a new alerting message brings it back',
      resolve: (s) => s.archived,
    }),
    markedUnread: t.boolean({
      description: 'Set by the viewer; markConversationRead clears it',
      resolve: (s) => s.markedUnread,
    }),
    draft: t.field({
      type: DraftRef,
      nullable: true,
      resolve: (s) => s.draft && { ...s.draft, conversationId: s.conversationId },
    }),
  }),
})

builder.objectField(ConversationRef, 'viewerSettings', (t) =>
  t.field({
    type: ConversationSettingsRef,
    description:
      "The viewer's own do-not-disturb, pin, archive, mark-unread and draft; other members never see or change them",
    // An operator's view of a conversation they are not in has none.
    resolve: (c, _a, ctx) =>
      c.member ? ctx.loaders.conversationSettings.load(c.conversation.id) : noSettings(c.conversation.id, 0),
  }),
)

const ConversationSettingsInput = builder.inputType('ConversationSettingsInput', {
  fields: (t) => ({
    doNotDisturbUntil: t.field({
      type: 'DateTime',
      description: 'Explicit null turns do-not-disturb off; omitted = unchanged',
    }),
    pinned: t.boolean({ description: 'Omitted = unchanged (likewise below)' }),
    archived: t.boolean(),
    markedUnread: t.boolean(),
  }),
})

const DraftInput = builder.inputType('DraftInput', {
  fields: (t) => ({
    text: t.string({ required: true }),
    quotedMessageId: t.id(),
    mentionUserIds: t.idList(),
    mentionRanges: t.field({ type: [MentionRangeInput], required: false }),
  }),
})

/** The conversation re-read after the write, settings included. */
const returning = (id: number, ctx: Context) => {
  ctx.loaders.conversationSettings.clear(id)
  return loadConversation(ctx, id, { fresh: true })
}

builder.mutationFields((t) => {
  const authed = t.withAuth({ authenticated: true })
  return {
    updateConversationSettings: authed.field({
      type: ConversationRef,
      description:
        "Changes the viewer's own settings of a conversation; omitted fields are unchanged. Pinning past the limit: LIMIT_REACHED",
      args: {
        conversationId: t.arg.id({ required: true }),
        input: t.arg({ type: ConversationSettingsInput, required: true }),
      },
      resolve: async (_r, args, ctx) =>
        returning(await updateConversationSettings(ctx.app, ctx.viewer, args.conversationId, args.input), ctx),
    }),
    saveDraft: authed.field({
      type: ConversationRef,
      description: "Saves the viewer's draft of a conversation (every device reads it); null clears",
      args: { conversationId: t.arg.id({ required: true }), draft: t.arg({ type: DraftInput }) },
      resolve: async (_r, args, ctx) =>
        returning(await saveDraft(ctx.app, ctx.viewer, args.conversationId, args.draft ?? null), ctx),
    }),
  }
})
