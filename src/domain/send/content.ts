import { z } from 'zod'
import { badInput, notFound } from '../core/errors.ts'
import { messageKeyText, parseMessageId, type MessageKey } from '../core/ids.ts'
import { findInJson } from '../../lib/jsonWalk.ts'
import { findVisibleMessages } from '../../store/messages.ts'
import { findConversationsForUser } from '../../store/conversations.ts'
import type { ForwardOriginRecord, MessageKind, MessageRecord } from '../../store/records.ts'
import type { Conn } from '../../store/sql.ts'
import { findUsersByIds } from '../../store/users.ts'
import type { Viewer } from '../core/app.ts'
import { LIMITS } from '../core/limits.ts'
import { refuseRecalled } from '../policy/policy.ts'
import { listNames } from './systemText.ts'

/** MessageContentInput as GraphQL hands it over: @oneOf, so exactly one member is set. */
export type ContentInput = Partial<
  Record<'text' | 'image' | 'audio' | 'video' | 'file' | 'sticker' | 'card' | 'forward' | 'material' | 'copy', unknown>
>

/** Content ready to store: the JSONB is the validated object, without unset (null) fields. */
export type ValidContent = { kind: MessageKind; content: Record<string, unknown> }
/** A merged forward before its snapshot is taken (that needs the sender's view of the sources). */
type ForwardRequest = { title: string | null; sources: MessageKey[] }
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
const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value), 'utf8')

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

/** Validators per input member (GraphQL already checked types and required fields). */
const CONTENT = {
  text: { kind: 'TEXT', schema: z.object({ text: words(LIMITS.textLength) }) },
  image: {
    kind: 'IMAGE',
    schema: z.object({
      url: httpUrl,
      width: pixels.nullish(),
      height: pixels.nullish(),
      sizeBytes: bytes.nullish(),
      thumbnailUrl: httpUrl.nullish(),
    }),
  },
  audio: { kind: 'AUDIO', schema: z.object({ url: httpUrl, durationMs, sizeBytes: bytes.nullish() }) },
  video: {
    kind: 'VIDEO',
    schema: z.object({
      url: httpUrl,
      durationMs,
      width: pixels.nullish(),
      height: pixels.nullish(),
      coverUrl: httpUrl.nullish(),
      sizeBytes: bytes.nullish(),
    }),
  },
  file: {
    kind: 'FILE',
    schema: z.object({
      url: httpUrl,
      name: words(LIMITS.fileNameLength),
      sizeBytes: bytes,
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
  return { kind: spec.kind, content: withoutNulls(parsed.data) }
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

/** A send's content as it will be stored: merged forwards and copies take their snapshots (as the sender sees the sources). */
export async function snapshotContent(conn: Conn, viewer: Viewer, draft: ContentDraft): Promise<SnapshotContent> {
  if ('forward' in draft) return { ...(await snapshotForward(conn, viewer, draft.forward)), forwardedFrom: null }
  if ('copy' in draft) return snapshotCopy(conn, viewer, draft.copy)
  return { ...draft, forwardedFrom: null }
}

/**
 * A copy of one message (content.copy): its kind and content, and where it came from. The original
 * must be visible to the sender (NOT_FOUND), not recalled (MESSAGE_RECALLED) and not a SYSTEM notice
 * (BAD_USER_INPUT). A copy of a copy names the first original, as a forward chain should.
 */
async function snapshotCopy(conn: Conn, viewer: Viewer, key: MessageKey): Promise<SnapshotContent> {
  const [original] = await findVisibleMessages(conn, viewer, [key])
  if (!original) throw notFound('Copied message')
  refuseRecalled(original, 'forwarded')
  if (original.senderId === null) throw badInput('system notices cannot be forwarded', 'content.copy.messageId')
  const origin = original.forwardedFrom ?? (await originOf(conn, viewer, original))
  return { kind: original.kind, content: original.content as Record<string, unknown>, forwardedFrom: origin }
}

async function originOf(conn: Conn, viewer: Viewer, original: MessageRecord): Promise<ForwardOriginRecord> {
  const [[sender], [access]] = await Promise.all([
    findUsersByIds(conn, [original.senderId!]),
    findConversationsForUser(conn, [original.conversationId], viewer.userId),
  ])
  return {
    senderName: sender?.displayName ?? '',
    sentAt: original.sentAt.toISOString(),
    conversationTitle: access?.conversation.title ?? null,
  }
}

/** A merged-forward item as stored: a copy, so later edits, recalls or deletes of the source do not change it. */
export type ForwardedItemRecord = { senderName: string; kind: MessageKind; content: unknown; sentAt: string }

/**
 * Snapshots the sources of a merged forward as the sender sees them (the shared visibility rule):
 * every source must be visible to the sender, else NOT_FOUND; recalled ones are MESSAGE_RECALLED;
 * SYSTEM notices are not forwardable. Items are in the order they were sent.
 */
async function snapshotForward(conn: Conn, viewer: Viewer, request: ForwardRequest): Promise<ValidContent> {
  const found = await findVisibleMessages(conn, viewer, request.sources)
  if (found.length !== request.sources.length) throw notFound('Forwarded message')
  for (const m of found) refuseRecalled(m, 'forwarded')
  if (found.some((m) => m.senderId === null))
    throw badInput('system notices cannot be forwarded', 'content.forward.messageIds')
  const senders = new Map(
    (await findUsersByIds(conn, [...new Set(found.map((m) => m.senderId!))])).map((u) => [u.id, u.displayName]),
  )
  const items: ForwardedItemRecord[] = found.sort(bySending).map((m) => ({
    senderName: senders.get(m.senderId!) ?? '',
    kind: m.kind,
    content: m.content,
    sentAt: m.sentAt.toISOString(),
  }))
  const content = { title: request.title ?? defaultForwardTitle(items.map((i) => i.senderName)), items }
  if (jsonBytes(content) > LIMITS.forwardSnapshotBytes) {
    throw badInput(
      `the forwarded messages are larger than ${LIMITS.forwardSnapshotBytes} bytes together`,
      'content.forward.messageIds',
    )
  }
  return { kind: 'FORWARD', content }
}

const bySending = (a: MessageRecord, b: MessageRecord) =>
  a.sentAt.getTime() - b.sentAt.getTime() || a.conversationId - b.conversationId || a.seq - b.seq

/** "Chat history of Alice", "… of Alice and Bob", "… of Alice, Bob and 3 others" (distinct senders, in order). */
function defaultForwardTitle(senderNames: string[]): string {
  const title = `Chat history of ${listNames(senderNames)}`
  return title.length <= LIMITS.forwardTitleLength ? title : `${title.slice(0, LIMITS.forwardTitleLength - 1)}…`
}

const strings = (value: unknown): string[] =>
  typeof value === 'string'
    ? [value]
    : typeof value === 'object' && value !== null
      ? Object.values(value).flatMap(strings)
      : []

/**
 * The human-readable text of stored content, which the sensitive-word filter reads: text, file
 * names, sticker labels, material title and digest, the card type and every string inside card data, and a
 * forward's title and items. URLs, ids and MIME types are not read (they would match by accident).
 */
export function readableText(kind: MessageKind, content: unknown): string[] {
  const c = (content ?? {}) as Record<string, unknown>
  const pick = (...keys: string[]) => keys.map((k) => c[k]).filter((v): v is string => typeof v === 'string')
  switch (kind) {
    case 'TEXT':
      return pick('text')
    case 'FILE':
      return pick('name')
    case 'STICKER':
      return pick('label')
    case 'MATERIAL':
      return pick('title', 'digest')
    case 'CARD':
      return [...pick('cardType'), ...strings(c.data)]
    case 'FORWARD':
      return [
        ...pick('title'),
        ...((c.items ?? []) as ForwardedItemRecord[]).flatMap((i) => readableText(i.kind, i.content)),
      ]
    default:
      return []
  }
}
