import { z } from 'zod'
import { badInput } from '../errors.ts'
import type { MessageKind } from '../store/records.ts'
import { LIMITS } from './limits.ts'

/** MessageContentInput as GraphQL hands it over: @oneOf, so exactly one member is set. */
export type ContentInput = Partial<Record<'text' | 'image' | 'audio' | 'video' | 'file' | 'sticker' | 'card' | 'forward' | 'material', unknown>>

const text = z.object({
  text: z
    .string()
    .max(LIMITS.textLength, `text is longer than ${LIMITS.textLength} characters`)
    .refine((s) => s.trim().length > 0, 'text must not be empty'),
})

/** Validators per input member; the stored JSON is the validated object. */
const CONTENT: Partial<Record<keyof ContentInput, { kind: MessageKind; schema: z.ZodType }>> = {
  text: { kind: 'TEXT', schema: text },
}

export type ValidContent = { kind: MessageKind; content: Record<string, unknown> }

export function validateContent(input: ContentInput): ValidContent {
  const set = Object.entries(input).filter(([, v]) => v !== null && v !== undefined)
  if (set.length !== 1) throw badInput('content must set exactly one kind', 'content')
  const [member, value] = set[0]!
  const spec = CONTENT[member as keyof ContentInput]
  if (!spec) throw badInput(`content kind "${member}" is not supported`, `content.${member}`)
  const parsed = spec.schema.safeParse(value)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!
    throw badInput(issue.message, ['content', member, ...issue.path].join('.'))
  }
  return { kind: spec.kind, content: parsed.data as Record<string, unknown> }
}
