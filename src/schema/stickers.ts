import { listSavedStickers, removeSticker, saveSticker } from '../domain/interactions/index.ts'
import type { SavedStickerRecord } from '../store/stickers.ts'
import { builder } from './builder.ts'
import { attachmentUrl } from './files.ts'
import { ViewerRef } from './viewer.ts'

const SavedStickerRef = builder.objectRef<SavedStickerRecord>('SavedSticker')

builder.node(SavedStickerRef, {
  id: { resolve: (s) => s.id },
  isTypeOf: (v) => typeof v === 'object' && v !== null && 'savedAt' in v && 'url' in v,
  fields: (t) => ({
    url: t.string({
      description: "The image's url; one uploaded to Parley is signed for the viewer and expires (read it again)",
      resolve: (s, _a, ctx) => s.url ?? attachmentUrl(s, ctx, 'a'),
    }),
    label: t.exposeString('label', { nullable: true }),
    savedAt: t.field({ type: 'DateTime', resolve: (s) => s.savedAt }),
  }),
})

const SavedStickerEdge = builder.edgeObject({ type: SavedStickerRef, name: 'SavedStickerEdge' })
const SavedStickerConnection = builder.connectionObject(
  { type: SavedStickerRef, name: 'SavedStickerConnection' },
  SavedStickerEdge,
)

builder.objectField(ViewerRef, 'stickers', (t) =>
  t.field({
    type: SavedStickerConnection,
    description: 'Newest first',
    args: { first: t.arg.int(), after: t.arg.string() },
    resolve: (v, args, ctx) => listSavedStickers(ctx.app, v, args),
  }),
)

builder.mutationFields((t) => {
  const authed = t.withAuth({ authenticated: true })
  return {
    saveSticker: authed.field({
      type: SavedStickerRef,
      description:
        'From an IMAGE or STICKER message the viewer can see; idempotent per url; at most 300 (LIMIT_REACHED)',
      args: { messageId: t.arg.id({ required: true }) },
      resolve: (_r, { messageId }, ctx) => saveSticker(ctx.app, ctx.viewer, messageId),
    }),
    removeSticker: authed.boolean({
      description: 'True when the sticker was removed, false when the viewer had no such sticker (a repeat)',
      args: { id: t.arg.id({ required: true }) },
      resolve: (_r, { id }, ctx) => removeSticker(ctx.app, ctx.viewer, id),
    }),
  }
})
