import { z } from 'zod'
import { badInput } from '../core/errors.ts'
import { messageKeyText, parseMessageId, type MessageKey } from '../core/ids.ts'
import { findInJson } from '../../lib/jsonWalk.ts'
import type { ForwardOriginRecord, MessageKind } from '../../store/records.ts'
import { LIMITS } from '../core/limits.ts'
import { parseMentionRanges, type MentionRangeInput } from './references.ts'
import { MEDIA, checkMediaSource } from './mediaInput.ts'

/** MessageContentInput as GraphQL hands it over: @oneOf, so exactly one member is set. */
export type ContentInput = Partial<
  Record<'text' | 'image' | 'audio' | 'video' | 'file' | 'sticker' | 'card' | 'forward' | 'material' | 'copy', unknown>
>

/** Content ready to store: the JSONB is the validated object, without unset (null) fields. */
export type ValidContent = { kind: MessageKind; content: Record<string, unknown> }
/** A merged forward before its snapshot is taken (that needs the sender's view of the sources). */
export type ForwardRequest = { title: string | null; sources: MessageKey[] }
/** A copy (content.copy) before its snapshot is taken: the message it copies. */
export type ContentDraft = ValidContent | { kind: 'FORWARD'; forward: ForwardRequest } | { copy: MessageKey }
/** Content as stored, with the origin of a copy. */
export type SnapshotContent = ValidContent & { forwardedFrom: ForwardOriginRecord | null }

const range = (min: number, max: number) =>
  z.number().int().min(min, `must be between ${min} and ${max}`).max(max, `must be between ${min} and ${max}`)
const words = (max: number) =>
  z
    .string()
    .max(max, `must be at most ${max} characters`)
    .refine((s) => s.trim().length > 0, 'must not be empty')
const httpUrl = z
  .url({ protocol: /^https?$/, error: 'must be an absolute http(s) URL' })
  .max(LIMITS.urlLength, `must be at most ${LIMITS.urlLength} characters`)
const bytes = range(0, LIMITS.mediaBytes)
const pixels = range(1, LIMITS.mediaPixels)
const durationMs = range(1, LIMITS.mediaDurationMs)
const attachmentId = z.string().nullish()
export const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value), 'utf8')

/** Objects and arrays nested deeper than `max` (the root is level 1), found without recursion. */
const nestedDeeperThan = (value: unknown, max: number) =>
  findInJson(value, (v, depth) => depth >= max && typeof v === 'object' && v !== null) !== null

// The depth is checked first, without recursion, and aborts: JSON.stringify (the size) recurses and
// would overflow the stack on data nested thousands of levels deep.
const cardData = z
  .custom<Record<string, unknown>>(
    (v) => typeof v === 'object' && v !== null && !Array.isArray(v),
    'must be a JSON object',
  )
  .refine((v) => !nestedDeeperThan(v, LIMITS.cardDataDepth), {
    message: `must nest objects and arrays at most ${LIMITS.cardDataDepth} levels deep`,
    abort: true,
  })
  .refine((v) => jsonBytes(v) <= LIMITS.cardDataBytes, `must be at most ${LIMITS.cardDataBytes} bytes as JSON`)

/** A card's buttons: at most 5, ids unique; a url button opens a link and calls nothing back. */
const cardActions = z
  .array(
    z.object({
      id: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1..64 of [A-Za-z0-9_-]'),
      label: words(40),
      style: z.enum(['DEFAULT', 'PRIMARY', 'DANGER']).nullish(),
      url: httpUrl.nullish(),
    }),
  )
  .max(5, 'must be at most 5')
  .refine((actions) => new Set(actions.map((a) => a.id)).size === actions.length, 'ids must be unique')
  .nullish()
  .transform((actions) => actions?.map((a) => withoutNulls({ ...a, style: a.style ?? 'DEFAULT' })))

/** Validators per input member (GraphQL already checked types and required fields). */
const CONTENT = {
  text: {
    kind: 'TEXT',
    schema: z.object({
      text: words(LIMITS.textLength),
      // Checked against the text by parseMentionRanges once the text is valid.
      mentionRanges: z
        .array(
          z.object({
            start: z.number().int(),
            length: z.number().int(),
            userId: z.string().nullish(),
            all: z.boolean().nullish(),
          }),
        )
        .nullish(),
    }),
  },
  image: {
    kind: 'IMAGE',
    schema: z.object({
      url: httpUrl.nullish(),
      attachmentId,
      width: pixels.nullish(),
      height: pixels.nullish(),
      sizeBytes: bytes.nullish(),
      thumbnailUrl: httpUrl.nullish(),
    }),
  },
  audio: {
    kind: 'AUDIO',
    schema: z.object({
      url: httpUrl.nullish(),
      attachmentId,
      durationMs: durationMs.nullish(),
      sizeBytes: bytes.nullish(),
    }),
  },
  video: {
    kind: 'VIDEO',
    schema: z.object({
      url: httpUrl.nullish(),
      attachmentId,
      durationMs: durationMs.nullish(),
      width: pixels.nullish(),
      height: pixels.nullish(),
      coverUrl: httpUrl.nullish(),
      sizeBytes: bytes.nullish(),
    }),
  },
  file: {
    kind: 'FILE',
    schema: z.object({
      url: httpUrl.nullish(),
      attachmentId,
      name: words(LIMITS.fileNameLength).nullish(),
      sizeBytes: bytes.nullish(),
      mimeType: z
        .string()
        .max(LIMITS.mimeTypeLength, `must be at most ${LIMITS.mimeTypeLength} characters`)
        .regex(/^[\w.+-]+\/[\w.+-]+( *;.*)?$/, 'must look like type/subtype')
        .nullish(),
    }),
  },
  sticker: {
    kind: 'STICKER',
    schema: z.object({
      stickerId: words(LIMITS.stickerIdLength),
      url: httpUrl,
      label: words(LIMITS.stickerLabelLength).nullish(),
    }),
  },
  card: {
    kind: 'CARD',
    schema: z.object({
      cardType: words(LIMITS.cardTypeLength).regex(
        /^[A-Za-z0-9][\w.:-]*$/,
        'must be an identifier (letters, digits, _ . : -)',
      ),
      data: cardData,
      actions: cardActions,
    }),
  },
  forward: {
    kind: 'FORWARD',
    schema: z.object({
      title: words(LIMITS.forwardTitleLength).nullish(),
      messageIds: z
        .array(z.string())
        .min(1, `must name 1..${LIMITS.forwardMessages} messages`)
        .max(LIMITS.forwardMessages, `must name 1..${LIMITS.forwardMessages} messages`),
    }),
  },
  material: {
    kind: 'MATERIAL',
    schema: z.object({
      title: words(LIMITS.materialTitleLength),
      coverUrl: httpUrl.nullish(),
      digest: words(LIMITS.materialDigestLength).nullish(),
      url: httpUrl,
    }),
  },
  copy: { kind: null, schema: z.object({ messageId: z.string() }) },
} as const satisfies Record<
  keyof ContentInput,
  { kind: MessageKind | null; schema: z.ZodType<Record<string, unknown>> }
>

const withoutNulls = (o: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== null && v !== undefined))

type TextInput = { text: string; mentionRanges?: MentionRangeInput[] | null }

/** A text message's content: its ranges are stored only when there are some, so older text stays as it was. */
function textContent({ text, mentionRanges }: TextInput): Record<string, unknown> {
  const ranges = parseMentionRanges(text, mentionRanges ?? [])
  return ranges.length ? { text, mentionRanges: ranges } : { text }
}

/** Validates a MessageContentInput; a merged forward comes back as a request to snapshot. */
export function parseContent(input: ContentInput): ContentDraft {
  const set = Object.entries(input).filter(([, v]) => v !== null && v !== undefined)
  if (set.length !== 1) throw badInput('content must set exactly one kind', 'content')
  const [member, value] = set[0]! as [keyof ContentInput, unknown]
  const spec = CONTENT[member]
  if (!spec) throw badInput(`content kind "${member}" is not supported`, `content.${member}`)
  const parsed = spec.schema.safeParse(value)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!
    const field = ['content', member, ...issue.path].join('.')
    throw badInput(`${field} ${issue.message}`, field)
  }
  if (member === 'forward') {
    const { title, messageIds } = parsed.data as { title?: string | null; messageIds: string[] }
    const unique = new Map(messageIds.map(parseMessageId).map((k) => [messageKeyText(k), k]))
    return { kind: 'FORWARD', forward: { title: title ?? null, sources: [...unique.values()] } }
  }
  if (spec.kind === null) return { copy: parseMessageId((parsed.data as { messageId: string }).messageId) }
  if (member === 'text') return { kind: 'TEXT', content: textContent(parsed.data as TextInput) }
  const content = withoutNulls(parsed.data)
  if (MEDIA.has(member)) checkMediaSource(member, content)
  return { kind: spec.kind, content }
}

/** Text under a text message's limits, outside a message (a draft's text). */
export function parseText(text: string, field: string): string {
  const parsed = words(LIMITS.textLength).safeParse(text)
  if (!parsed.success) throw badInput(`${field} ${parsed.error.issues[0]!.message}`, field)
  return parsed.data
}

/** For actions that take content but no forward or copy (editMessage). */
export function validateContent(input: ContentInput): ValidContent {
  const draft = parseContent(input)
  if ('forward' in draft) throw badInput('a merged forward cannot be used here', 'content.forward')
  if ('copy' in draft) throw badInput('a copy cannot be used here', 'content.copy')
  return draft
}

/** updateCard's input: new data, and new actions when given (undefined: keep the card's). */
export function parseCardUpdate(input: { data?: unknown; actions?: unknown }): {
  data: Record<string, unknown>
  actions: Record<string, unknown>[] | undefined
} {
  const parsed = z.object({ data: cardData, actions: cardActions }).safeParse(input)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!
    const field = issue.path.join('.')
    throw badInput(`${field} ${issue.message}`, field)
  }
  return parsed.data
}

/** A merged-forward item as stored: a copy, so later edits, recalls or deletes of the source do not change it. */
export type ForwardedItemRecord = { senderName: string; kind: MessageKind; content: unknown; sentAt: string }
