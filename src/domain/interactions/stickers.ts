import { badInput, limitReached, notFound } from '../core/errors.ts'
import { parseId, parseMessageId } from '../core/ids.ts'
import { lockUser } from '../../store/users.ts'
import {
  deleteSticker,
  findSticker,
  findStickerState,
  insertSticker,
  listStickers,
  type SavedStickerRecord,
  type StickerImage,
} from '../../store/stickers.ts'
import { type App, type Viewer } from '../core/app.ts'
import { transact } from '../core/transact.ts'
import { keysetCursor } from '../core/cursors.ts'
import { pageSize } from '../core/input.ts'
import { requireVisibleMessage } from '../lifecycle/lifecycle.ts'
import { LIMITS } from '../core/limits.ts'
import { forwardPage, type Connection } from '../core/paging.ts'
import { refuseRecalled } from '../policy/policy.ts'

/**
 * "Add to stickers": the image (a url, or an attachment uploaded to Parley, which the saver may then
 * read for as long as the sticker is kept) and a sticker's label of an IMAGE or STICKER message the
 * viewer may see. Idempotent per image (a repeat returns the saved one); at most LIMITS.savedStickers a user.
 * The viewer's own list: nothing is published.
 */
export async function saveSticker(app: App, viewer: Viewer, messageId: string): Promise<SavedStickerRecord> {
  const key = parseMessageId(messageId)
  return transact(app, async (tx) => {
    const message = await requireVisibleMessage(tx, viewer, key)
    refuseRecalled(message, 'saved as a sticker')
    if (message.kind !== 'IMAGE' && message.kind !== 'STICKER')
      throw badInput(`a ${message.kind} message cannot be saved as a sticker; IMAGE and STICKER can`, 'messageId')
    const { url, label, attachment } = message.content as {
      url?: string
      label?: string
      attachment?: { attachmentId: number }
    }
    // An uploaded image's URLs are signed per viewer for minutes: the sticker keeps the attachment.
    const image: StickerImage = attachment
      ? { url: null, attachmentId: attachment.attachmentId }
      : { url: url!, attachmentId: null }
    await lockUser(tx, viewer.userId)
    const { existing, count } = await findStickerState(tx, viewer.userId, image)
    if (existing) return { result: existing, events: [] }
    if (count >= LIMITS.savedStickers)
      throw limitReached(
        `you can save at most ${LIMITS.savedStickers} stickers; remove one first`,
        LIMITS.savedStickers,
      )
    return { result: await insertSticker(tx, { userId: viewer.userId, label: label ?? null, ...image }), events: [] }
  })
}

/** True when the sticker was the viewer's and is gone now; false when there was none (a repeat). */
export const removeSticker = (app: App, viewer: Viewer, id: string): Promise<boolean> =>
  deleteSticker(app.db, viewer.userId, parseId(id, 'SavedSticker'))

export async function requireSticker(app: App, viewer: Viewer, id: number): Promise<SavedStickerRecord> {
  return (await findSticker(app.db, viewer.userId, id)) ?? Promise.reject(notFound('SavedSticker'))
}

const STICKER_CURSOR = keysetCursor('sticker', ['id'])

/** Viewer.stickers: newest first. */
export async function listSavedStickers(
  app: App,
  viewer: Viewer,
  args: { first?: number | null; after?: string | null },
): Promise<Connection<SavedStickerRecord>> {
  const limit = pageSize(args.first, 'first')
  const after = STICKER_CURSOR.decode(args.after, 'after')
  const rows = await listStickers(app.db, viewer.userId, { beforeId: after?.[0] ?? null, limit: limit + 1 })
  return forwardPage(rows, limit, (s) => STICKER_CURSOR.encode(s.id), after !== null)
}
