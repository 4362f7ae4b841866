import { notFound } from '../domain/core/index.ts'
import { findConversationMember } from '../domain/history/index.ts'
import { requireSticker } from '../domain/interactions/index.ts'
import { requireAuditEntry, requireReport } from '../domain/governance/index.ts'
import { requireWebhook } from '../domain/webhooks/index.ts'
import { readAttachment } from '../domain/files/index.ts'
import { requirePushDevice } from '../domain/push/index.ts'
import { decodeGlobalId, parseId, parseMemberId, parseMessageId } from '../domain/core/index.ts'
import { builder } from './builder.ts'
import { viewerOf } from './context.ts'
import { loadConversation } from './conversation.ts'

builder.queryField('node', (t) =>
  t.withAuth({ authenticated: true }).field({
    type: builder.nodeInterfaceRef(),
    nullable: true,
    description: 'A malformed id is BAD_USER_INPUT; an unknown one, or one the viewer may not see, is NOT_FOUND',
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_root, { id }, ctx) => {
      const { type } = decodeGlobalId(id)
      switch (type) {
        case 'User':
          return (await ctx.loaders.users.load(parseId(id, 'User'))) ?? Promise.reject(notFound('User'))
        case 'Conversation':
          return loadConversation(ctx, parseId(id, 'Conversation'))
        case 'Message': {
          const key = parseMessageId(id)
          await loadConversation(ctx, key.conversationId)
          return (await ctx.loaders.messages.load(key)) ?? Promise.reject(notFound('Message'))
        }
        case 'ConversationMember': {
          const key = parseMemberId(id)
          await loadConversation(ctx, key.conversationId)
          return findConversationMember(ctx.app, key.conversationId, key.userId)
        }
        case 'SavedSticker':
          return requireSticker(ctx.app, viewerOf(ctx), parseId(id, 'SavedSticker'))
        case 'Report':
          return requireReport(ctx.app, viewerOf(ctx), id)
        case 'AuditEntry':
          return requireAuditEntry(ctx.app, viewerOf(ctx), id)
        case 'Webhook':
          return requireWebhook(ctx.app, viewerOf(ctx), parseId(id, 'Webhook'))
        case 'WebhookDelivery':
          // Read through its webhook (Webhook.deliveries); the id is the webhook-id header's value.
          throw notFound('WebhookDelivery')
        case 'Attachment':
          return readAttachment(ctx.app, viewerOf(ctx), id)
        case 'Upload':
          throw notFound('Upload')
        case 'PushDevice':
          return requirePushDevice(ctx.app, viewerOf(ctx), parseId(id, 'PushDevice'))
      }
    },
  }),
)
