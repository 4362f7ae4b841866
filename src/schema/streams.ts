import { appendToStreamingMessage, finishStreamingMessage, startStreamingMessage } from '../domain/streams/index.ts'
import { builder } from './builder.ts'
import { MessageRef, SendMessagePayload } from './message.ts'

builder.mutationFields((t) => ({
  startStreamingMessage: t.withAuth({ authenticated: true }).field({
    type: SendMessagePayload,
    description:
      'Starts a streamed reply: a TEXT message with status STREAMING and empty text (an ADDED event, alerting as a send does); idempotent by clientMessageId',
    args: {
      conversationId: t.arg.id({ required: true }),
      clientMessageId: t.arg.string({ required: true }),
      quotedMessageId: t.arg.id(),
    },
    resolve: (_r, args, ctx) => startStreamingMessage(ctx.app, ctx.viewer, args),
  }),
  appendToStreamingMessage: t.withAuth({ authenticated: true }).boolean({
    description:
      'The next delta (sequence = the last + 1; the last again is a no-op, a gap BAD_USER_INPUT): a MessageStreamEvent to every subscriber; the sender only',
    args: {
      messageId: t.arg.id({ required: true }),
      sequence: t.arg.int({ required: true }),
      delta: t.arg.string({ required: true }),
    },
    resolve: (_r, args, ctx) => appendToStreamingMessage(ctx.app, ctx.viewer, args),
  }),
  finishStreamingMessage: t.withAuth({ authenticated: true }).field({
    type: MessageRef,
    description:
      'Ends the stream with `text` (else the text so far): status NORMAL, one pts (STREAM_ENDED); the sender only; a finished stream answers as it is',
    args: { messageId: t.arg.id({ required: true }), text: t.arg.string() },
    resolve: (_r, args, ctx) => finishStreamingMessage(ctx.app, ctx.viewer, args),
  }),
}))
