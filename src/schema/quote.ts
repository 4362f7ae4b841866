import { builder } from './builder.ts'
import { MessageRef } from './message.ts'

builder.objectField(MessageRef, 'quoted', (t) =>
  t.field({
    type: MessageRef,
    nullable: true,
    description:
      'The quoted message as the viewer may see it: a tombstone (content null) once recalled, null when hidden from the viewer',
    // The messages loader applies the shared visibility rule (membership window, directed, deleted-for-me).
    resolve: (m, _a, ctx) =>
      m.quotedSeq === null ? null : ctx.loaders.messages.load({ conversationId: m.conversationId, seq: m.quotedSeq }),
  }),
)
