import { encodeGlobalId } from '../domain/core/index.ts'
import {
  createWebhook,
  deleteWebhook,
  listWebhookDeliveries,
  rotateWebhookSecret,
  updateWebhook,
  viewerWebhooks,
  type WebhookWithSecret,
} from '../domain/webhooks/index.ts'
import type { DeliveryRecord } from '../store/webhookDeliveryHistory.ts'
import type { WebhookRecord } from '../store/webhooks.ts'
import { builder } from './builder.ts'
import { viewerOf } from './context.ts'
import { ConversationRef, loadConversationOfMessage } from './conversation.ts'
import { ViewerRef } from './viewer.ts'

const EVENT_TYPES = [
  'MESSAGE_ADDED',
  'MESSAGE_EDITED',
  'MESSAGE_RECALLED',
  'MESSAGE_STREAM_ENDED',
  'REACTIONS_CHANGED',
  'MEMBERSHIP_CHANGED',
  'CARD_ACTION',
  'FRIENDSHIP_CHANGED',
] as const
const WebhookEventTypeEnum = builder.enumType('WebhookEventType', { values: EVENT_TYPES })
const WebhookScopeEnum = builder.enumType('WebhookScope', {
  values: {
    VIEWER: { description: "The owner's own conversations, as the owner may see them" },
    ALL: { description: 'Every conversation (operators only)' },
  } as const,
})
const WebhookDeliveryStatusEnum = builder.enumType('WebhookDeliveryStatus', {
  values: ['PENDING', 'DELIVERED', 'FAILED'] as const,
})

const WebhookRef = builder.objectRef<WebhookRecord>('Webhook')
const WebhookDeliveryRef = builder.objectRef<DeliveryRecord>('WebhookDelivery')

builder.node(WebhookDeliveryRef, {
  id: { resolve: (d) => d.id },
  description: "The webhook-id header's value is this delivery's id, the same for every attempt",
  isTypeOf: (v) => typeof v === 'object' && v !== null && 'eventType' in v && 'attempts' in v,
  fields: (t) => ({
    eventType: t.field({ type: WebhookEventTypeEnum, resolve: (d) => d.eventType }),
    conversation: t.field({
      type: ConversationRef,
      nullable: true,
      description: 'Null when the owner can no longer see it, or for an event of no conversation (a friendship)',
      resolve: (d, _args, ctx) =>
        d.conversationId === null ? null : loadConversationOfMessage(ctx, d.conversationId).catch(() => null),
    }),
    pts: t.field({ type: 'SafeInt', nullable: true, resolve: (d) => d.pts }),
    status: t.field({ type: WebhookDeliveryStatusEnum, resolve: (d) => d.status }),
    attempts: t.exposeInt('attempts'),
    lastStatusCode: t.exposeInt('lastStatusCode', { nullable: true }),
    lastError: t.exposeString('lastError', { nullable: true }),
    nextAttemptAt: t.field({ type: 'DateTime', nullable: true, resolve: (d) => d.nextAttemptAt }),
    deliveredAt: t.field({ type: 'DateTime', nullable: true, resolve: (d) => d.deliveredAt }),
    createdAt: t.field({ type: 'DateTime', resolve: (d) => d.createdAt }),
  }),
})

const WebhookDeliveryEdge = builder.edgeObject({ type: WebhookDeliveryRef, name: 'WebhookDeliveryEdge' })
const WebhookDeliveryConnection = builder.connectionObject(
  { type: WebhookDeliveryRef, name: 'WebhookDeliveryConnection' },
  WebhookDeliveryEdge,
)

builder.node(WebhookRef, {
  id: { resolve: (w) => w.id },
  isTypeOf: (v) => typeof v === 'object' && v !== null && 'scope' in v && 'events' in v,
  fields: (t) => ({
    url: t.exposeString('url'),
    events: t.field({ type: [WebhookEventTypeEnum], resolve: (w) => w.events }),
    scope: t.field({ type: WebhookScopeEnum, resolve: (w) => w.scope }),
    conversationIds: t.idList({
      nullable: true,
      description: 'Null: every conversation of the scope',
      resolve: (w) => w.conversationIds?.map((id) => encodeGlobalId('Conversation', id)) ?? null,
    }),
    active: t.exposeBoolean('active'),
    disabledReason: t.exposeString('disabledReason', { nullable: true }),
    createdAt: t.field({ type: 'DateTime', resolve: (w) => w.createdAt }),
    deliveries: t.field({
      type: WebhookDeliveryConnection,
      description: 'Newest first; kept 7 days',
      args: { first: t.arg.int(), after: t.arg.string(), status: t.arg({ type: WebhookDeliveryStatusEnum }) },
      resolve: (w, args, ctx) => listWebhookDeliveries(ctx.app, w, args),
    }),
  }),
})

const WebhookSecretPayload = builder.objectRef<WebhookWithSecret>('WebhookSecretPayload').implement({
  fields: (t) => ({
    webhook: t.field({ type: WebhookRef, resolve: (p) => p.webhook }),
    secret: t.exposeString('secret', { description: '"whsec_" + base64 of 32 random bytes; shown only here' }),
  }),
})

const CreateWebhookInput = builder.inputType('CreateWebhookInput', {
  fields: (t) => ({
    url: t.string({ required: true }),
    events: t.field({ type: [WebhookEventTypeEnum], required: true }),
    scope: t.field({ type: WebhookScopeEnum, defaultValue: 'VIEWER' }),
    conversationIds: t.idList(),
  }),
})
const UpdateWebhookInput = builder.inputType('UpdateWebhookInput', {
  fields: (t) => ({
    url: t.string(),
    events: t.field({ type: [WebhookEventTypeEnum] }),
    active: t.boolean(),
  }),
})

builder.objectField(ViewerRef, 'webhooks', (t) =>
  t.field({ type: [WebhookRef], resolve: (v, _args, ctx) => viewerWebhooks(ctx.app, v) }),
)

builder.mutationFields((t) => {
  const authed = t.withAuth({ authenticated: true })
  return {
    createWebhook: authed.field({
      type: WebhookSecretPayload,
      description:
        'url: http(s) to an address outside private ranges (or inside WEBHOOK_ALLOWED_NETWORKS); scope ALL: operators only; at most 10 a user',
      args: { input: t.arg({ type: CreateWebhookInput, required: true }) },
      resolve: (_r, { input }, ctx) =>
        createWebhook(ctx.app, ctx.viewer, { ...input, conversationIds: input.conversationIds?.map(String) }),
    }),
    updateWebhook: authed.field({
      type: WebhookRef,
      description:
        "The owner's only, else NOT_FOUND; active: true sends a FAILED delivery again, then the rest in order",
      args: { id: t.arg.id({ required: true }), input: t.arg({ type: UpdateWebhookInput, required: true }) },
      resolve: (_r, { id, input }, ctx) => updateWebhook(ctx.app, ctx.viewer, String(id), input),
    }),
    rotateWebhookSecret: authed.field({
      type: WebhookSecretPayload,
      description: 'The old secret stops signing at once',
      args: { id: t.arg.id({ required: true }) },
      resolve: (_r, { id }, ctx) => rotateWebhookSecret(ctx.app, viewerOf(ctx), String(id)),
    }),
    deleteWebhook: authed.boolean({
      args: { id: t.arg.id({ required: true }) },
      resolve: (_r, { id }, ctx) => deleteWebhook(ctx.app, ctx.viewer, String(id)),
    }),
  }
})
