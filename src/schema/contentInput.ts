import { CardActionStyleEnum } from './enums.ts'
import { builder } from './builder.ts'
import { MentionRangeInput } from './mentionRanges.ts'

type Types = typeof builder extends PothosSchemaTypes.SchemaBuilder<infer T> ? T : never

/** The inputs of a message's content: exactly one member set (domain/send/content.ts checks each). */

const TextInput = builder.inputType('TextInput', {
  fields: (t) => ({ text: t.string({ required: true }), mentionRanges: t.field({ type: [MentionRangeInput] }) }),
})

const attachmentId = (t: PothosSchemaTypes.InputFieldBuilder<Types, 'InputObject'>) =>
  t.id({ description: 'An attachment the sender uploaded (completeUpload); exactly one of url and attachmentId' })

const ImageInput = builder.inputType('ImageInput', {
  fields: (t) => ({
    url: t.string(),
    attachmentId: attachmentId(t),
    width: t.int(),
    height: t.int(),
    sizeBytes: t.int(),
    thumbnailUrl: t.string(),
  }),
})

const AudioInput = builder.inputType('AudioInput', {
  fields: (t) => ({ url: t.string(), attachmentId: attachmentId(t), durationMs: t.int(), sizeBytes: t.int() }),
})

const VideoInput = builder.inputType('VideoInput', {
  fields: (t) => ({
    url: t.string(),
    attachmentId: attachmentId(t),
    durationMs: t.int(),
    width: t.int(),
    height: t.int(),
    coverUrl: t.string(),
    sizeBytes: t.int(),
  }),
})

const FileInput = builder.inputType('FileInput', {
  fields: (t) => ({
    url: t.string(),
    attachmentId: attachmentId(t),
    name: t.string(),
    sizeBytes: t.int(),
    mimeType: t.string(),
  }),
})

const StickerInput = builder.inputType('StickerInput', {
  fields: (t) => ({ stickerId: t.string({ required: true }), url: t.string({ required: true }), label: t.string() }),
})

export const CardActionInput = builder.inputType('CardActionInput', {
  fields: (t) => ({
    id: t.string({ required: true, description: '1..64 of [A-Za-z0-9_-], unique on the card' }),
    label: t.string({ required: true, description: '1..40 characters' }),
    style: t.field({ type: CardActionStyleEnum, defaultValue: 'DEFAULT' }),
    url: t.string({ description: 'Opens this link; no callback' }),
  }),
})

const CardInput = builder.inputType('CardInput', {
  fields: (t) => ({
    cardType: t.string({ required: true }),
    data: t.field({ type: 'JSON', required: true }),
    actions: t.field({ type: [CardActionInput], description: 'At most 5 buttons' }),
  }),
})

const ForwardInput = builder.inputType('ForwardInput', {
  fields: (t) => ({ title: t.string(), messageIds: t.idList({ required: true }) }),
})

const CopyInput = builder.inputType('CopyInput', {
  description: 'Forward one message as itself: a message the sender can see, not recalled, not SYSTEM; FORWARD allowed',
  fields: (t) => ({ messageId: t.id({ required: true }) }),
})

const MaterialInput = builder.inputType('MaterialInput', {
  fields: (t) => ({
    title: t.string({ required: true }),
    coverUrl: t.string(),
    digest: t.string(),
    url: t.string({ required: true }),
  }),
})

export const MessageContentInput = builder.inputType('MessageContentInput', {
  isOneOf: true,
  fields: (t) => ({
    text: t.field({ type: TextInput }),
    image: t.field({ type: ImageInput }),
    audio: t.field({ type: AudioInput }),
    video: t.field({ type: VideoInput }),
    file: t.field({ type: FileInput }),
    sticker: t.field({ type: StickerInput }),
    card: t.field({ type: CardInput }),
    forward: t.field({ type: ForwardInput }),
    material: t.field({ type: MaterialInput }),
    copy: t.field({
      type: CopyInput,
      description: "The new message takes the original's kind and content (a snapshot) and names it in forwardedFrom",
    }),
  }),
})
