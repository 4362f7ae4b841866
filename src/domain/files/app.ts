import type { App } from '../core/app.ts'
import type { AttachmentRecord } from '../../store/attachments.ts'
import type { MediaStore } from './mediaStore.ts'
import { downloadExpiry, signedPath, type MediaVariant } from './signing.ts'

/** What the metrics hear of uploads (ops/mediaMetrics.ts): refusals by reason. */
type FilesObserver = { refused(reason: 'size' | 'kind' | 'too-large'): void }

/**
 * The files feature's per-instance parts: where the bytes live, the key media URLs are signed with,
 * and who hears about uploads.
 */
export type FilesApp = App & { media: MediaStore; mediaKey: Buffer; filesObserver?: FilesObserver }

/**
 * An attachment as messages carry it: a completed attachment never changes, so a send copies what a
 * reader needs into the content, and a copy or a merged forward carries it along. `attachmentId` is
 * what store/attachments.ts's trigger records and access is checked against.
 */
export type AttachmentSnapshot = {
  attachmentId: number
  kind: AttachmentRecord['kind']
  name: string
  mimeType: string
  sizeBytes: number
  sha256: string
  width?: number
  height?: number
  durationMs?: number
  hasThumbnail: boolean
  uploaderId: number
  createdAt: string
}

export function snapshotOf(a: AttachmentRecord): AttachmentSnapshot {
  const optional = { width: a.width, height: a.height, durationMs: a.durationMs }
  return {
    attachmentId: a.id,
    kind: a.kind,
    name: a.name,
    mimeType: a.mimeType!,
    sizeBytes: a.sizeBytes,
    sha256: a.sha256!,
    ...Object.fromEntries(Object.entries(optional).filter(([, v]) => v !== null)),
    hasThumbnail: a.hasThumbnail,
    uploaderId: a.uploaderId,
    createdAt: a.createdAt.toISOString(),
  }
}

/**
 * A download URL of an attachment (`a`) or its thumbnail (`t`) signed for `userId`. Only callers that
 * know the user may read the attachment sign one: its uploader, or a reader of a message carrying it
 * (the content resolvers); the download checks that again (http/media.ts).
 */
export const mediaUrl = (app: FilesApp, origin: string, userId: number, id: number, variant: MediaVariant) =>
  origin + signedPath(app.mediaKey, { variant, id, userId, expires: downloadExpiry() })
