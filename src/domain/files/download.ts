import type { Readable } from 'node:stream'
import { findAttachment, mayReadAttachment, type AttachmentRecord } from '../../store/attachments.ts'
import { snapshotOf, type AttachmentSnapshot, type FilesApp } from './app.ts'
import type { App, Viewer } from '../core/app.ts'
import { notFound } from '../core/errors.ts'
import { parseId } from '../core/ids.ts'
import type { ByteRange } from './mediaStore.ts'
import { verifySignedUrl } from './signing.ts'
import { attachmentKey, thumbnailKey } from './uploads.ts'

/** node(id) of an attachment: for whoever may read it (its uploader, a reader of a message carrying it), else NOT_FOUND. */
export async function readAttachment(app: App, viewer: Viewer, id: string): Promise<AttachmentSnapshot> {
  const attachmentId = parseId(id, 'Attachment')
  const attachment = (await mayReadAttachment(app.db, attachmentId, viewer.userId))
    ? await findAttachment(app.db, attachmentId)
    : null
  if (!attachment) throw notFound('Attachment')
  return snapshotOf(attachment)
}

/** Types a browser may show inline; anything else is sent as a download (Content-Disposition: attachment). */
const INLINE = /^(image|audio|video)\//

/** What a download answers: a refusal, a redirect to the store, or the bytes (whole or a range). */
export type Download =
  | { status: 403 | 404 }
  | { status: 416; size: number }
  | { status: 302; location: string }
  | {
      status: 200 | 206
      headers: Record<string, string>
      body: Readable
    }

function dispositionOf(a: AttachmentRecord, thumbnail: boolean): string {
  const inline = thumbnail || INLINE.test(a.mimeType!)
  // RFC 6266/5987: the name as UTF-8, and an ASCII fallback for old clients.
  const ascii = a.name.replace(/[^\x20-\x7e]|["\\]/g, '_')
  return `${inline ? 'inline' : 'attachment'}; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(a.name)}`
}

/** One satisfiable range of `Range: bytes=…`; undefined for none or several (the whole file is sent), null for unsatisfiable. */
function parseRange(header: string | undefined, size: number): ByteRange | null | undefined {
  const m = header ? /^bytes=(\d*)-(\d*)$/.exec(header.trim()) : null
  if (!m || (m[1] === '' && m[2] === '')) return undefined
  const [start, end] =
    m[1] === '' ? [Math.max(0, size - Number(m[2])), size - 1] : [Number(m[1]), m[2] === '' ? size - 1 : Number(m[2])]
  if (start >= size || end < start) return null
  return { start, end: Math.min(end, size - 1) }
}

/**
 * A signed media URL's bytes, when the signature holds, has not expired, and the user it was signed
 * for may still read the attachment (a recall since the URL was signed takes that away at once).
 */
export async function openDownload(app: FilesApp, url: URL, rangeHeader?: string): Promise<Download> {
  const target = verifySignedUrl(app.mediaKey, url)
  if (!target || target.variant === 'u') return { status: 403 }
  if (!(await mayReadAttachment(app.db, target.id, target.userId))) return { status: 403 }
  const attachment = (await findAttachment(app.db, target.id))!
  const thumbnail = target.variant === 't'
  if (thumbnail && !attachment.hasThumbnail) return { status: 404 }
  const key = thumbnail ? thumbnailKey(attachment.id) : attachmentKey(attachment.id)
  const contentType = thumbnail ? 'image/webp' : attachment.mimeType!
  const disposition = dispositionOf(attachment, thumbnail)
  const elsewhere = await app.media.downloadUrl(key, { contentType, disposition })
  if (elsewhere) return { status: 302, location: elsewhere }
  const size = await app.media.size(key)
  if (size === null) return { status: 404 }
  const range = parseRange(rangeHeader, size)
  if (range === null) return { status: 416, size }
  const headers: Record<string, string> = {
    'content-type': contentType,
    'content-disposition': disposition,
    'x-content-type-options': 'nosniff',
    'accept-ranges': 'bytes',
    // Signed per viewer and short-lived: a shared cache must not keep it for others.
    'cache-control': 'private, max-age=300',
    'content-length': String(range ? range.end - range.start + 1 : size),
  }
  if (range) headers['content-range'] = `bytes ${range.start}-${range.end}/${size}`
  return { status: range ? 206 : 200, headers, body: await app.media.read(key, range) }
}
