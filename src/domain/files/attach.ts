import type { App, Viewer } from '../core/app.ts'
import { badInput, notFound } from '../core/errors.ts'
import type { MessageKind } from '../../store/records.ts'
import { findAttachment, findOwnAttachment } from '../../store/attachments.ts'
import { findSticker } from '../../store/stickers.ts'
import { idOfType } from '../core/ids.ts'
import { snapshotOf } from './app.ts'
import type { ContentDraft, ValidContent } from '../send/content.ts'

/** Which attachments a media content takes: its own kind, and a FILE any (a photo sent as a document). */
const FITS: Partial<Record<MessageKind, (kind: string) => boolean>> = {
  IMAGE: (k) => k === 'IMAGE',
  AUDIO: (k) => k === 'AUDIO',
  VIDEO: (k) => k === 'VIDEO',
  FILE: () => true,
}

/**
 * Media content that names an attachment (domain/send/content.ts parsed its id) gets the
 * attachment's facts in place of anything the sender said: size, dimensions, name, type, and the
 * snapshot content.attachment resolves from. The sender's own completed attachment only, else NOT_FOUND.
 */
export async function attachToContent(app: App, viewer: Viewer, draft: ContentDraft): Promise<ContentDraft> {
  if ('content' in draft && draft.kind === 'STICKER') return attachSavedSticker(app, viewer, draft)
  if (!('content' in draft) || typeof draft.content.attachmentId !== 'number') return draft
  const { kind, content } = draft
  const id = draft.content.attachmentId
  const attachment = await findOwnAttachment(app.db, viewer.userId, id)
  if (!attachment) throw notFound('attachment')
  if (!FITS[kind]!(attachment.kind))
    throw badInput(
      `a ${attachment.kind} attachment cannot be sent as ${kind}`,
      `content.${kind.toLowerCase()}.attachmentId`,
    )
  const snapshot = snapshotOf(attachment)
  const durationMs = snapshot.durationMs ?? content.durationMs
  if ((kind === 'AUDIO' || kind === 'VIDEO') && durationMs === undefined)
    throw badInput('durationMs is required: the upload declared none', `content.${kind.toLowerCase()}.durationMs`)
  const { attachmentId: _named, ...rest } = content
  const facts = {
    IMAGE: { width: snapshot.width, height: snapshot.height, sizeBytes: snapshot.sizeBytes },
    AUDIO: { durationMs, sizeBytes: snapshot.sizeBytes },
    VIDEO: { durationMs, width: snapshot.width, height: snapshot.height, sizeBytes: snapshot.sizeBytes },
    FILE: { name: snapshot.name, sizeBytes: snapshot.sizeBytes, mimeType: snapshot.mimeType },
  }[kind as 'IMAGE' | 'AUDIO' | 'VIDEO' | 'FILE']
  const filled = Object.fromEntries(Object.entries({ ...rest, ...facts }).filter(([, v]) => v !== undefined))
  return { kind, content: { ...filled, attachment: snapshot } }
}

/**
 * A sticker whose stickerId is the id of one of the sender's saved stickers keeping an uploaded image
 * carries that attachment (its url then resolves, signed, for each reader), which grants the file to
 * the conversation's readers as an IMAGE message would. Someone else's saved sticker is NOT_FOUND;
 * any other stickerId is the client's own name for a sticker served elsewhere.
 */
async function attachSavedSticker(app: App, viewer: Viewer, draft: ValidContent): Promise<ValidContent> {
  const savedId = idOfType(String(draft.content.stickerId), 'SavedSticker')
  if (savedId === null) return draft
  const sticker = await findSticker(app.db, viewer.userId, savedId)
  if (!sticker) throw notFound('SavedSticker')
  if (sticker.attachmentId === null) return draft
  const attachment = await findAttachment(app.db, sticker.attachmentId)
  const { url: _signedForTheSender, ...rest } = draft.content
  return { kind: draft.kind, content: { ...rest, attachment: snapshotOf(attachment!) } }
}
