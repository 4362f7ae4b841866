import { adminMessages } from '../domain/members/index.ts'
import { builder } from './builder.ts'
import { ConversationTypeEnum, MessageKindEnum } from './enums.ts'
import { MessageConnection } from './message.ts'

const AdminMessageFilter = builder.inputType('AdminMessageFilter', {
  fields: (t) => ({
    conversationId: t.id(),
    senderId: t.id(),
    conversationType: t.field({ type: ConversationTypeEnum }),
    kind: t.field({ type: MessageKindEnum }),
    sentAfter: t.field({ type: 'DateTime', description: 'Inclusive' }),
    sentBefore: t.field({ type: 'DateTime', description: 'Exclusive' }),
    text: t.string({ description: 'The same matching as searchMessages, across all conversations' }),
  }),
})

builder.queryField('adminMessages', (t) =>
  t.withAuth({ operator: true }).field({
    type: MessageConnection,
    description: 'Operators only: a read-only view of all messages for investigations, newest first',
    args: { filter: t.arg({ type: AdminMessageFilter, required: true }), first: t.arg.int(), after: t.arg.string() },
    resolve: (_r, { filter, ...page }, ctx) => adminMessages(ctx.app, ctx.viewer, filter, page),
  }),
)
