import type { FieldMap } from '@pothos/core'
import type { MessageKind } from '../store/records.ts'
import type { MessageKey } from '../domain/core/index.ts'
import type { SystemContentRecord } from '../domain/send/index.ts'
import { loadExisting } from '../domain/history/index.ts'
import { renderSystemText } from '../domain/send/index.ts'
import { builder } from './builder.ts'
import { CardActionStyleEnum, MessageKindEnum } from './enums.ts'
import { UserRef } from './user.ts'
import { MentionRangeRef } from './mentionRanges.ts'
import { AttachmentRef, attachmentUrl } from './files.ts'

/** Stored message content (JSONB) together with its kind, which picks the union member. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSONB read per union member; each member's resolvers know its shape
type ContentShape = { kind: MessageKind; data: Record<string, any>; key?: MessageKey }

const TYPE_BY_KIND: Record<MessageKind, string> = {
  TEXT: 'TextContent',
  IMAGE: 'ImageContent',
  AUDIO: 'AudioContent',
  VIDEO: 'VideoContent',
  FILE: 'FileContent',
  STICKER: 'StickerContent',
  CARD: 'CardContent',
  FORWARD: 'ForwardContent',
  MATERIAL: 'MaterialContent',
  SYSTEM: 'SystemContent',
}

type Types = typeof builder extends PothosSchemaTypes.SchemaBuilder<infer T> ? T : never
type Fields = PothosSchemaTypes.ObjectFieldBuilder<Types, ContentShape>

const content = <F extends FieldMap>(name: string, fields: (t: Fields) => F) =>
  builder.objectRef<ContentShape>(name).implement({ fields })

const str = (t: Fields, key: string, nullable = false) => t.string({ nullable, resolve: (c) => c.data[key] ?? null })
const int = (t: Fields, key: string, nullable = true) => t.int({ nullable, resolve: (c) => c.data[key] ?? null })

/** A media content's url: the one sent, or its attachment's, signed for the viewer reading it. */
const mediaUrl = (t: Fields) =>
  t.string({ resolve: (c, _a, ctx) => c.data.url ?? attachmentUrl(c.data.attachment, ctx, 'a') })
const attachment = (t: Fields) =>
  t.field({ type: AttachmentRef, nullable: true, resolve: (c) => c.data.attachment ?? null })

const TextContent = content('TextContent', (t) => ({
  text: str(t, 'text'),
  mentionRanges: t.field({ type: [MentionRangeRef], resolve: (c) => c.data.mentionRanges ?? [] }),
}))
const ImageContent = content('ImageContent', (t) => ({
  url: mediaUrl(t),
  width: int(t, 'width'),
  height: int(t, 'height'),
  sizeBytes: int(t, 'sizeBytes'),
  thumbnailUrl: t.string({
    nullable: true,
    resolve: (c, _a, ctx) =>
      c.data.thumbnailUrl ?? (c.data.attachment?.hasThumbnail ? attachmentUrl(c.data.attachment, ctx, 't') : null),
  }),
  attachment: attachment(t),
}))
const AudioContent = content('AudioContent', (t) => ({
  url: mediaUrl(t),
  durationMs: int(t, 'durationMs', false),
  sizeBytes: int(t, 'sizeBytes'),
  attachment: attachment(t),
}))
const VideoContent = content('VideoContent', (t) => ({
  url: mediaUrl(t),
  durationMs: int(t, 'durationMs', false),
  width: int(t, 'width'),
  height: int(t, 'height'),
  coverUrl: str(t, 'coverUrl', true),
  sizeBytes: int(t, 'sizeBytes'),
  attachment: attachment(t),
}))
const FileContent = content('FileContent', (t) => ({
  url: mediaUrl(t),
  name: str(t, 'name'),
  sizeBytes: int(t, 'sizeBytes'),
  mimeType: str(t, 'mimeType', true),
  attachment: attachment(t),
}))
const StickerContent = content('StickerContent', (t) => ({
  stickerId: str(t, 'stickerId'),
  url: mediaUrl(t),
  label: str(t, 'label', true),
  attachment: attachment(t),
}))
type CardActionShape = { id: string; label: string; style: 'DEFAULT' | 'PRIMARY' | 'DANGER'; url?: string }
const CardAction = builder.objectRef<CardActionShape>('CardAction').implement({
  description: 'A button on a card; one with a url opens the link and calls nothing back',
  fields: (t) => ({
    id: t.exposeString('id'),
    label: t.exposeString('label'),
    style: t.field({ type: CardActionStyleEnum, resolve: (a) => a.style }),
    url: t.string({ nullable: true, resolve: (a) => a.url ?? null }),
  }),
})
const CardContent = content('CardContent', (t) => ({
  cardType: str(t, 'cardType'),
  data: t.field({ type: 'JSON', resolve: (c) => c.data.data }),
  actions: t.field({ type: [CardAction], resolve: (c) => c.data.actions ?? [] }),
  updatedAt: t.field({
    type: 'DateTime',
    nullable: true,
    description: 'The last updateCard',
    resolve: (c) => (c.data.updatedAt ? new Date(c.data.updatedAt) : null),
  }),
  viewerActionId: t.string({
    nullable: true,
    description: 'The action the viewer pressed, if any',
    // A card that never had buttons has nothing to look up; one whose buttons updateCard removed keeps the choice.
    resolve: (c, _a, ctx) => (c.key && c.data.actions ? ctx.loaders.pressedActions.load(c.key) : null),
  }),
}))
const MaterialContent = content('MaterialContent', (t) => ({
  title: str(t, 'title'),
  coverUrl: str(t, 'coverUrl', true),
  digest: str(t, 'digest', true),
  url: str(t, 'url'),
}))

export const SystemEventEnum = builder.enumType('SystemEvent', {
  values: [
    'CONVERSATION_CREATED',
    'MEMBERS_ADDED',
    'MEMBER_REMOVED',
    'MEMBER_LEFT',
    'TITLE_CHANGED',
    'ROLE_CHANGED',
    'MEMBER_MUTED',
    'CALL_STARTED',
    'CALL_ENDED',
    'MESSAGE_PINNED',
    'MESSAGE_UNPINNED',
    'FRIEND_ADDED',
    'NOTICE',
  ] as const,
})
const SystemContent = content('SystemContent', (t) => ({
  event: t.field({ type: SystemEventEnum, resolve: (c) => c.data.event }),
  actor: t.field({
    type: UserRef,
    nullable: true,
    resolve: (c, _a, ctx) => (c.data.actorId ? ctx.loaders.users.load(c.data.actorId) : null),
  }),
  targets: t.field({
    type: [UserRef],
    resolve: (c, _a, ctx) => loadExisting(ctx.loaders.users, c.data.targetIds ?? []),
  }),
  text: t.string({
    description: 'The sentence to show, rendered from the event with current display names',
    resolve: async (c, _a, ctx) => {
      const system = c.data as SystemContentRecord
      const [actor, targets] = await Promise.all([
        system.actorId ? ctx.loaders.users.load(system.actorId) : null,
        loadExisting(ctx.loaders.users, system.targetIds ?? []),
      ])
      return renderSystemText(
        system,
        actor?.displayName ?? null,
        targets.map((u) => u.displayName),
      )
    },
  }),
}))

/** A merged-forward item: a snapshot taken when the forward was sent. */
type ForwardedItemShape = { senderName: string; kind: MessageKind; content: Record<string, unknown>; sentAt: string }
const ForwardedItem = builder.objectRef<ForwardedItemShape>('ForwardedItem')
const ForwardContent = content('ForwardContent', (t) => ({
  title: str(t, 'title'),
  items: t.field({ type: [ForwardedItem], resolve: (c) => c.data.items ?? [] }),
}))

export const MessageContentUnion = builder.unionType('MessageContent', {
  types: [
    TextContent,
    ImageContent,
    AudioContent,
    VideoContent,
    FileContent,
    StickerContent,
    CardContent,
    ForwardContent,
    MaterialContent,
    SystemContent,
  ],
  resolveType: (c) => TYPE_BY_KIND[c.kind],
})

ForwardedItem.implement({
  fields: (t) => ({
    senderName: t.exposeString('senderName'),
    kind: t.field({ type: MessageKindEnum, resolve: (i) => i.kind }),
    content: t.field({ type: MessageContentUnion, resolve: (i) => ({ kind: i.kind, data: i.content }) }),
    sentAt: t.field({ type: 'DateTime', resolve: (i) => new Date(i.sentAt) }),
  }),
})
