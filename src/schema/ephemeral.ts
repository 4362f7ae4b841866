import { sendSignal, type EventPayload } from '../domain/live/index.ts'
import { encodeGlobalId, messageGlobalId } from '../domain/core/index.ts'
import { builder } from './builder.ts'
import { UserRef } from './user.ts'

/** The events that are never stored and take no pts: an agent's streamed deltas and signals. */

type Payload<N extends EventPayload['typename']> = Extract<EventPayload, { typename: N }>

export const MessageStreamEventRef = builder.objectRef<Payload<'MessageStreamEvent'>>('MessageStreamEvent').implement({
  description:
    'The next delta of a STREAMING message (never stored, no pts): `sequence` orders the deltas of one message, `text` is the whole text so far',
  fields: (t) => ({
    conversationId: t.id({ resolve: (e) => encodeGlobalId('Conversation', e.key.conversationId) }),
    messageId: t.id({ resolve: (e) => messageGlobalId(e.key) }),
    sequence: t.exposeInt('sequence'),
    delta: t.exposeString('delta'),
    text: t.exposeString('text'),
  }),
})

export const SignalEventRef = builder.objectRef<Payload<'SignalEvent'>>('SignalEvent').implement({
  description: 'An ephemeral signal from a member (never stored, no pts), e.g. a call invitation',
  fields: (t) => ({
    conversationId: t.id({ resolve: (e) => encodeGlobalId('Conversation', e.conversationId) }),
    from: t.field({ type: UserRef, resolve: async (e, _a, ctx) => (await ctx.loaders.users.load(e.userId))! }),
    type: t.string({ resolve: (e) => e.signalType }),
    payload: t.field({ type: 'JSON', nullable: true, resolve: (e) => e.payload }),
    sentAt: t.field({ type: 'DateTime', resolve: (e) => e.sentAt }),
  }),
})

builder.mutationField('sendSignal', (t) =>
  t.withAuth({ authenticated: true }).boolean({
    description:
      'A non-stored signal to the members (all, or toUserIds among them), e.g. a call invitation; payload at most 4 KB as JSON; rate limited like typing',
    args: {
      conversationId: t.arg.id({ required: true }),
      type: t.arg.string({ required: true }),
      payload: t.arg({ type: 'JSON' }),
      toUserIds: t.arg.idList(),
    },
    resolve: (_r, args, ctx) => sendSignal(ctx.app, ctx.viewer, args),
  }),
)
