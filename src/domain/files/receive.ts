import type { Readable } from 'node:stream'
import { findAttachment } from '../../store/attachments.ts'
import type { FilesApp } from './app.ts'
import { verifySignedUrl } from './signing.ts'
import { slotKey } from './uploads.ts'

/** How a PUT of a slot's bytes ended, as an HTTP status and a sentence for the body. */
export type Received = { status: 200 | 400 | 403 | 404 | 409 | 413; message: string }

/**
 * The PUT to a slot's signed URL (the local store): exactly the declared bytes, streamed to disk.
 * A retried PUT replaces the bytes of an earlier one, until completeUpload takes them.
 */
export async function receiveUpload(
  app: FilesApp,
  url: URL,
  body: Readable,
  contentLength: string | undefined,
): Promise<Received> {
  const target = verifySignedUrl(app.mediaKey, url)
  if (!target || target.variant !== 'u') return { status: 403, message: 'this upload URL is not valid or has expired' }
  const slot = await findAttachment(app.db, target.id)
  if (!slot || slot.uploaderId !== target.userId) return { status: 404, message: 'no such upload' }
  if (slot.completedAt) return { status: 409, message: 'this upload is completed; its bytes cannot change' }
  if (slot.expiresAt.getTime() <= Date.now()) return { status: 403, message: 'this upload slot has expired' }
  // Refused before a byte is read when the length says so already, else once the body runs past it.
  const outcome =
    contentLength !== undefined && Number(contentLength) > slot.sizeBytes
      ? 'too-large'
      : await app.media.write(slotKey(slot.id), body, slot.sizeBytes)
  if (outcome === 'too-large') {
    app.filesObserver?.refused('too-large')
    return { status: 413, message: `this slot takes exactly ${slot.sizeBytes} bytes` }
  }
  if (outcome === 'too-short')
    return { status: 400, message: `the body is shorter than the ${slot.sizeBytes} bytes declared` }
  return { status: 200, message: 'stored; now call completeUpload' }
}
