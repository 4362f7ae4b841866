import { listMessages, listMessagesAround, seqCursor } from '../domain/history/index.ts'
import { sendMessage } from '../domain/send/index.ts'
import { encodeGlobalId, messageKeyText } from '../domain/core/index.ts'
import type { ForwardOriginRecord, MessageRecord } from '../store/records.ts'
import { loadExisting, loadUser } from '../domain/history/index.ts'
import { isRecalled, shownContent } from '../domain/policy/index.ts'
import { builder } from './builder.ts'
import { MessageContentUnion } from './content.ts'
import { MessageContentInput } from './contentInput.ts'
import { viewerOf } from './context.ts'
import { ConversationRef, loadConversationOfMessage } from './conversation.ts'
import { MessageKindEnum, MessageStatusEnum, SenderTypeEnum } from './enums.ts'
import { pageFields } from './pageFields.ts'
import { UserRef } from './user.ts'

export const MessageRef = builder.objectRef<MessageRecord>('Message')

const ForwardOriginRef = builder.objectRef<ForwardOriginRecord>('ForwardOrigin').implement({
  description: 'Where a copy (content.copy) came from, as it was when copied',
  fields: (t) => ({
    senderName: t.exposeString('senderName'),
    sentAt: t.field({ type: 'DateTime', resolve: (o) => new Date(o.sentAt) }),
    conversationTitle: t.exposeString('conversationTitle', { nullable: true }),
  }),
})

builder.node(MessageRef, {
  id: { resolve: messageKeyText },
  isTypeOf: (v) => typeof v === 'object' && v !== null && 'seq' in v && 'pts' in v,
  fields: (t) => ({
    conversation: t.field({
      type: ConversationRef,
      description:
        'NOT_FOUND for a conversation the viewer is not in; operators reading adminMessages get its public facts (decision 0014)',
      resolve: (m, _a, ctx) => loadConversationOfMessage(ctx, m.conversationId),
    }),
    conversationId: t.id({ resolve: (m) => encodeGlobalId('Conversation', m.conversationId) }),
    // Fields exposed as they are on the record have no resolver: graphql-jit reads the property inline.
    seq: t.expose('seq', { type: 'SafeInt' }),
    pts: t.expose('pts', { type: 'SafeInt', description: "The change number of this message's latest state" }),
    senderType: t.expose('senderType', { type: SenderTypeEnum }),
    sender: t.field({
      type: UserRef,
      nullable: true,
      description: 'Null for SYSTEM',
      resolve: (m, _a, ctx) => (m.senderId === null ? null : loadUser(ctx.loaders, m.senderId)),
    }),
    kind: t.expose('kind', { type: MessageKindEnum }),
    content: t.field({
      type: MessageContentUnion,
      nullable: true,
      description: 'Null once RECALLED (a tombstone stays in history)',
      resolve: (m) => {
        const data = shownContent(m) as Record<string, unknown> | null
        return data === null ? null : { kind: m.kind, data, key: m }
      },
    }),
    clientMessageId: t.exposeString('clientMessageId', { nullable: true }),
    mentions: t.field({
      type: [UserRef],
      resolve: (m, _a, ctx) => loadExisting(ctx.loaders.users, m.mentionUserIds),
    }),
    mentionsAll: t.boolean({ resolve: (m) => m.mentionAll }),
    mentionsViewer: t.boolean({
      description: 'Whether the message mentions the viewer, by name or @all (never on their own messages)',
      resolve: (m, _a, ctx) => {
        const viewerId = viewerOf(ctx).userId
        return m.senderId !== viewerId && (m.mentionAll || m.mentionUserIds.includes(viewerId))
      },
    }),
    status: t.expose('status', { type: MessageStatusEnum }),
    sentAt: t.expose('sentAt', { type: 'DateTime' }),
    editedAt: t.expose('editedAt', { type: 'DateTime', nullable: true }),
    recalledAt: t.expose('recalledAt', { type: 'DateTime', nullable: true }),
    forwardedFrom: t.field({
      type: ForwardOriginRef,
      nullable: true,
      description: 'Set on copies made with content.copy; null once RECALLED',
      resolve: (m) => (isRecalled(m) ? null : m.forwardedFrom),
    }),
    recalledBy: t.field({
      type: UserRef,
      nullable: true,
      resolve: (m, _a, ctx) => (m.recalledById === null ? null : loadUser(ctx.loaders, m.recalledById)),
    }),
  }),
})

// The relay plugin resolves an edge's node with a function of its own; exposed, graphql-jit reads it inline (50 calls fewer per page).
const MessageEdge = builder.edgeObject({
  type: MessageRef,
  name: 'MessageEdge',
  fields: (t) => ({ node: t.expose('node', { type: MessageRef }) }),
})
export const MessageConnection = builder.connectionObject({ type: MessageRef, name: 'MessageConnection' }, MessageEdge)

builder.objectFields(ConversationRef, (t) => ({
  lastMessage: t.field({
    type: MessageRef,
    nullable: true,
    description: 'The newest message visible to the viewer',
    resolve: (c, _a, ctx) => ctx.loaders.lastMessages.load(c.conversation.id),
  }),
  messages: t.connection(
    {
      type: MessageRef,
      description:
        'Relay connection over seq cursors; edges always ascending. No arguments = the newest 20; more than 100 = BAD_USER_INPUT.',
      resolve: (c, args, ctx, info) =>
        listMessages(ctx.app, viewerOf(ctx), ctx.loaders, c, args, pageFields(info.fragments, info.fieldNodes)),
    },
    MessageConnection,
  ),
  messagesAround: t.field({
    type: MessageConnection,
    description: 'A window centred on an anchor seq (e.g. viewerMember.lastReadSeq + 1 = first unread)',
    args: { seq: t.arg({ type: 'SafeInt', required: true }), count: t.arg.int({ defaultValue: 20 }) },
    resolve: (c, { seq, count }, ctx, info) =>
      listMessagesAround(
        ctx.app,
        viewerOf(ctx),
        ctx.loaders,
        c.conversation.id,
        seq,
        count,
        pageFields(info.fragments, info.fieldNodes),
      ),
  }),
  message: t.field({
    type: MessageRef,
    nullable: true,
    args: { seq: t.arg({ type: 'SafeInt', required: true }) },
    resolve: (c, { seq }, ctx) => ctx.loaders.messages.load({ conversationId: c.conversation.id, seq }),
  }),
}))

const SendMessageInput = builder.inputType('SendMessageInput', {
  fields: (t) => ({
    conversationId: t.id({ required: true }),
    clientMessageId: t.string({ required: true, description: 'Idempotency key chosen by the client, 1..128 chars' }),
    content: t.field({ type: MessageContentInput, required: true }),
    quotedMessageId: t.id(),
    mentionUserIds: t.idList(),
    mentionAll: t.boolean(),
    visibleToUserIds: t.idList({ description: 'Directed message: only these members (and the sender) see it' }),
  }),
})

export const SendMessagePayload = builder
  .objectRef<{ message: MessageRecord; deduplicated: boolean }>('SendMessagePayload')
  .implement({
    fields: (t) => ({
      message: t.field({ type: MessageRef, resolve: (p) => p.message }),
      deduplicated: t.exposeBoolean('deduplicated'),
      edge: t.field({
        type: MessageEdge,
        description: 'The message as an edge of Conversation.messages, for clients that append it to that connection',
        resolve: (p) => ({ cursor: seqCursor(p.message), node: p.message }),
      }),
    }),
  })

builder.mutationField('sendMessage', (t) =>
  t.withAuth({ authenticated: true }).field({
    type: SendMessagePayload,
    args: { input: t.arg({ type: SendMessageInput, required: true }) },
    resolve: (_r, { input }, ctx) => sendMessage(ctx.app, ctx.viewer, input),
  }),
)
