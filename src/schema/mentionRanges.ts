import type { MentionRangeRecord } from '../domain/send/index.ts'
import { builder } from './builder.ts'
import { UserRef } from './user.ts'

/** TextContent.mentionRanges: where in the text a mention stands, so a client renders it from the user, not the typed name. */
export const MentionRangeRef = builder.objectRef<MentionRangeRecord>('MentionRange').implement({
  description: 'A mention in UTF-16 units of TextContent.text (as JavaScript counts)',
  fields: (t) => ({
    start: t.exposeInt('start'),
    length: t.exposeInt('length'),
    user: t.field({
      type: UserRef,
      nullable: true,
      resolve: (r, _a, ctx) => (r.userId === undefined ? null : ctx.loaders.users.load(r.userId)),
    }),
    all: t.boolean({ resolve: (r) => r.all === true }),
  }),
})

export const MentionRangeInput = builder.inputType('MentionRangeInput', {
  fields: (t) => ({
    start: t.int({ required: true }),
    length: t.int({ required: true }),
    userId: t.id(),
    all: t.boolean(),
  }),
})
