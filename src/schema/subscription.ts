import {
  openConversationEventBatches,
  openConversationEvents,
  openInboxEvents,
  type Delivery,
  type DeliveryBatch,
  type EventPayload,
} from '../domain/live/index.ts'
import { seqCursor } from '../domain/history/index.ts'
import { sendTyping } from '../domain/live/index.ts'
import { encodeGlobalId, messageGlobalId } from '../domain/core/index.ts'
import { builder } from './builder.ts'
import { viewerOf, type Context } from './context.ts'
import { ConversationRef } from './conversation.ts'
import { MessageRef } from './message.ts'
import { UserRef } from './user.ts'
import { FriendshipEventRef } from './friends.ts'
import { PresenceEventRef } from './presence.ts'
import { MessageStreamEventRef, SignalEventRef } from './ephemeral.ts'
import { ThreadUpdatedEventRef } from './threads.ts'

type Payload<N extends EventPayload['typename']> = Extract<EventPayload, { typename: N }>

const MessageEventKindEnum = builder.enumType('MessageEventKind', {
  values: ['ADDED', 'EDITED', 'RECALLED', 'REACTIONS_CHANGED', 'STREAM_ENDED'] as const,
})

const MessageEventRef = builder.objectRef<Payload<'MessageEvent'>>('MessageEvent').implement({
  description: 'A message was sent, edited or recalled; `message` is its state as the subscriber may see it',
  // Exposed, not resolved: graphql-jit reads such a field inline instead of calling a resolver (a replay executes this per change).
  fields: (t) => ({
    kind: t.expose('kind', { type: MessageEventKindEnum }),
    pts: t.expose('pts', {
      type: 'SafeInt',
      description: 'The change number: resume with sincePts set to the last one seen',
    }),
    message: t.expose('message', { type: MessageRef }),
    cursor: t.string({
      description: "The message's cursor in Conversation.messages",
      resolve: (e) => seqCursor(e.message),
    }),
    alert: t.exposeBoolean('alert', {
      description:
        "The viewer's client should notify: an ADDED message by someone else, visible to the viewer, in a conversation not in do-not-disturb, or mentioning the viewer or @all (which breaks through it). Never for own messages, edits, recalls or SYSTEM messages",
    }),
  }),
})

const ReadEventRef = builder.objectRef<Payload<'ReadEvent'>>('ReadEvent').implement({
  description: "A member's read position moved (others' only when read receipts are on)",
  fields: (t) => ({
    conversationId: t.id({ resolve: (e) => encodeGlobalId('Conversation', e.conversationId) }),
    user: t.field({ type: UserRef, resolve: async (e, _a, ctx) => (await ctx.loaders.users.load(e.userId))! }),
    lastReadSeq: t.field({ type: 'SafeInt', resolve: (e) => e.lastReadSeq }),
  }),
})

const TypingEventRef = builder.objectRef<Payload<'TypingEvent'>>('TypingEvent').implement({
  description: 'Another member is typing; hide the indicator at expiresAt unless a newer event renews it',
  fields: (t) => ({
    conversationId: t.id({ resolve: (e) => encodeGlobalId('Conversation', e.conversationId) }),
    user: t.field({ type: UserRef, resolve: async (e, _a, ctx) => (await ctx.loaders.users.load(e.userId))! }),
    expiresAt: t.field({ type: 'DateTime', resolve: (e) => e.expiresAt }),
    status: t.string({
      nullable: true,
      description: 'What an agent is doing ("thinking…"); null for plain typing',
      resolve: (e) => e.status,
    }),
  }),
})

const ReminderDueEventRef = builder.objectRef<Payload<'ReminderDueEvent'>>('ReminderDueEvent').implement({
  fields: (t) => ({
    message: t.field({ type: MessageRef, resolve: (e) => e.message }),
    remindAt: t.field({ type: 'DateTime', resolve: (e) => e.remindAt }),
  }),
})

const ConversationJoinedEventRef = builder
  .objectRef<Payload<'ConversationJoinedEvent'>>('ConversationJoinedEvent')
  .implement({
    description: 'The viewer became a member; later messages of the conversation follow as MessageEvents',
    fields: (t) => ({
      conversation: t.field({ type: ConversationRef, resolve: (e) => e.conversation }),
    }),
  })

export const MessageActionEventRef = builder.objectRef<Payload<'MessageActionEvent'>>('MessageActionEvent').implement({
  description: "The viewer's own delete-for-me, favourite or reminder changed (for their other devices)",
  fields: (t) => ({
    messageId: t.id({ resolve: (e) => messageGlobalId(e.key) }),
    deletedForMe: t.boolean({ resolve: (e) => e.state.deletedForMe }),
    favorite: t.boolean({ resolve: (e) => e.state.favorite }),
    remindAt: t.field({ type: 'DateTime', nullable: true, resolve: (e) => e.state.remindAt }),
  }),
})

const ConversationUpdatedEventRef = builder
  .objectRef<Payload<'ConversationUpdatedEvent'>>('ConversationUpdatedEvent')
  .implement({
    description:
      "The viewer's own settings or draft of a conversation changed (from another device); in viewerUpdates, anything sync lists for it (see lastPts, then Conversation.changes)",
    fields: (t) => ({
      conversation: t.field({ type: ConversationRef, resolve: (e) => e.conversation }),
    }),
  })

const ConversationRemovedEventRef = builder
  .objectRef<Payload<'ConversationRemovedEvent'>>('ConversationRemovedEvent')
  .implement({
    description: 'The viewer left, was removed, or unsubscribed: nothing of the conversation follows',
    fields: (t) => ({
      conversationId: t.id({ resolve: (e) => encodeGlobalId('Conversation', e.conversationId) }),
    }),
  })

const resolveType = (payload: EventPayload) => payload.typename

const ConversationEventUnion = builder.unionType('ConversationEvent', {
  types: [MessageEventRef, ReadEventRef, TypingEventRef, MessageStreamEventRef, SignalEventRef],
  resolveType,
})

type ConversationEventName = 'MessageEvent' | 'ReadEvent' | 'TypingEvent' | 'MessageStreamEvent' | 'SignalEvent'
type ConversationEventPayload = Payload<ConversationEventName>

const ConversationEventBatchRef = builder.objectRef<DeliveryBatch>('ConversationEventBatch').implement({
  description: 'Consecutive events of one conversation stream, in stream order',
  fields: (t) => ({
    events: t.field({
      type: [ConversationEventUnion],
      resolve: (batch) => batch.payloads as ConversationEventPayload[],
    }),
  }),
})

/** What an InboxEvent resolves from: every payload but the stream's own signals. */
export type InboxPayload = Payload<Exclude<EventPayload['typename'], 'Error' | 'AccountChanged'>>

export const InboxEventUnion = builder.unionType('InboxEvent', {
  types: [
    MessageEventRef,
    ReadEventRef,
    TypingEventRef,
    MessageStreamEventRef,
    SignalEventRef,
    ReminderDueEventRef,
    ConversationJoinedEventRef,
    MessageActionEventRef,
    ConversationUpdatedEventRef,
    ConversationRemovedEventRef,
    FriendshipEventRef,
    ThreadUpdatedEventRef,
    PresenceEventRef,
  ],
  resolveType,
})

/**
 * Each event brings its own loaders (primed from reads shared by every subscriber of the event), so
 * nested fields resolve through them. Events of one subscription execute one after another, so
 * swapping the context's loaders here is safe. An Error payload ends the stream with that error.
 */
export function deliver<N extends EventPayload['typename']>(delivery: Delivery, ctx: Context): Payload<N> {
  ctx.loaders = delivery.loaders
  if (delivery.payload.typename === 'Error') throw delivery.payload.error
  return delivery.payload as Payload<N>
}

/** deliver for a batch: its events share one set of loaders; an Error comes alone and ends the stream. */
function deliverBatch(batch: DeliveryBatch, ctx: Context): DeliveryBatch {
  ctx.loaders = batch.loaders
  for (const payload of batch.payloads) if (payload.typename === 'Error') throw payload.error
  return batch
}

builder.subscriptionType({})

// No withAuth here: scope-auth checks subscription fields per event, not before subscribing, so
// the subscribe functions check the viewer themselves (viewerOf: UNAUTHENTICATED).
builder.subscriptionFields((t) => {
  /** Both conversation streams take the same arguments and resume the same way. */
  const conversationStreamArgs = { conversationId: t.arg.id({ required: true }), sincePts: t.arg({ type: 'SafeInt' }) }
  return {
    conversationEvents: t.field({
      type: ConversationEventUnion,
      description:
        'With sincePts: first replays every change after it (as MessageEvents, ascending pts), then continues live with no gap and no duplicate. Too far behind: error RESYNC_REQUIRED.',
      args: conversationStreamArgs,
      subscribe: (_root, args, ctx) => openConversationEvents(ctx.app, viewerOf(ctx), args),
      resolve: (delivery: Delivery, _args, ctx) => deliver<ConversationEventName>(delivery, ctx),
    }),
    conversationEventBatches: t.field({
      type: ConversationEventBatchRef,
      description:
        'conversationEvents for catching up: the same events in the same order, with the same resume and errors, but a replay arrives a page (up to 100 changes) per payload; live events come one per payload.',
      args: conversationStreamArgs,
      subscribe: (_root, args, ctx) => openConversationEventBatches(ctx.app, viewerOf(ctx), args),
      resolve: (batch: DeliveryBatch, _args, ctx) => deliverBatch(batch, ctx),
    }),
    inboxEvents: t.field({
      type: InboxEventUnion,
      description: 'Everything for the viewer across all their conversations',
      subscribe: (_root, _args, ctx) => openInboxEvents(ctx.app, viewerOf(ctx)),
      resolve: (delivery: Delivery, _args, ctx) => deliver<InboxPayload['typename']>(delivery, ctx),
    }),
  }
})

builder.mutationField('sendTyping', (t) =>
  t.withAuth({ authenticated: true }).boolean({
    description:
      'Ephemeral, never stored; at most one event per 2 s per conversation (extra calls answer true and publish nothing)',
    args: { conversationId: t.arg.id({ required: true }), status: t.arg.string() },
    resolve: (_r, { conversationId, status }, ctx) => sendTyping(ctx.app, ctx.viewer, conversationId, status),
  }),
)
