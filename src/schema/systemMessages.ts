import { postSystemMessage } from '../domain/send/index.ts'
import { builder } from './builder.ts'
import { SystemEventEnum } from './content.ts'
import { MessageContentInput } from './contentInput.ts'
import { SendMessagePayload } from './message.ts'

const SystemMessageInput = builder.inputType('SystemMessageInput', {
  fields: (t) => ({
    conversationId: t.id({ required: true }),
    clientMessageId: t.string({
      required: true,
      description: 'Idempotent like sendMessage (per conversation, for SYSTEM)',
    }),
    content: t.field({ type: MessageContentInput, required: true }),
    event: t.field({
      type: SystemEventEnum,
      description: 'NOTICE, CALL_STARTED or CALL_ENDED: the message is kind SYSTEM, its text from content.text',
    }),
    actorId: t.id(),
    targetIds: t.idList(),
  }),
})

builder.mutationField('postSystemMessage', (t) =>
  t.withAuth({ authenticated: true }).field({
    type: SendMessagePayload,
    description:
      "Operators only (a host system's token): posts as the conversation itself (senderType SYSTEM, sender null); delivered live and through webhooks like any message",
    args: { input: t.arg({ type: SystemMessageInput, required: true }) },
    resolve: (_r, { input }, ctx) => postSystemMessage(ctx.app, ctx.viewer, input),
  }),
)
