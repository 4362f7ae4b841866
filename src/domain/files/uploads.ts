import type { Viewer } from '../core/app.ts'
import { badInput, DomainError, notFound } from '../core/errors.ts'
import { parseId } from '../core/ids.ts'
import { LIMITS } from '../core/limits.ts'
import {
  deleteSlot,
  findAttachment,
  insertUpload,
  markCompleted,
  type AttachmentKind,
  type AttachmentRecord,
} from '../../store/attachments.ts'
import { inspect } from './inspect.ts'
import { signedPath } from './signing.ts'
import type { FilesApp } from './app.ts'

/** How long a slot takes PUTs and waits for completeUpload. */
const SLOT_LIFETIME_MS = 60 * 60 * 1000

export type CreateUploadInput = {
  name: string
  sizeBytes: number
  mimeType: string
  kind: AttachmentKind
  durationMs?: number | null
}

export type UploadSlot = {
  uploadId: number
  url: string
  method: 'PUT'
  headers: Record<string, string>
  expiresAt: Date
}

export const slotKey = (id: number) => `u/${id}`
export const attachmentKey = (id: number) => `a/${id}`
export const thumbnailKey = (id: number) => `t/${id}`

function checkInput(app: FilesApp, input: CreateUploadInput): void {
  const { name, sizeBytes, mimeType, durationMs } = input
  if (name.trim().length === 0) throw badInput('name must not be empty', 'name')
  if (/[/\\]/.test(name)) throw badInput('name must be a file name without a path (no / or \\)', 'name')
  if (name.length > LIMITS.fileNameLength)
    throw badInput(`name must be at most ${LIMITS.fileNameLength} characters`, 'name')
  if (!Number.isSafeInteger(sizeBytes) || sizeBytes < 1 || sizeBytes > app.settings.maxUploadBytes)
    throw badInput(`sizeBytes must be between 1 and ${app.settings.maxUploadBytes} (MAX_UPLOAD_BYTES)`, 'sizeBytes')
  if (mimeType.length > LIMITS.mimeTypeLength || !/^[\w.+-]+\/[\w.+-]+( *;.*)?$/.test(mimeType))
    throw badInput('mimeType must look like type/subtype', 'mimeType')
  if (durationMs != null && (durationMs < 1 || durationMs > LIMITS.mediaDurationMs))
    throw badInput(`durationMs must be between 1 and ${LIMITS.mediaDurationMs}`, 'durationMs')
}

/** A slot for one upload by the viewer: its declared size and kind, PUT within the hour. */
export async function createUpload(
  app: FilesApp,
  viewer: Viewer,
  input: CreateUploadInput,
  origin: string,
): Promise<UploadSlot> {
  checkInput(app, input)
  const expiresAt = new Date(Date.now() + SLOT_LIFETIME_MS)
  const slot = await insertUpload(app.db, {
    uploaderId: viewer.userId,
    kind: input.kind,
    name: input.name,
    sizeBytes: input.sizeBytes,
    declaredMime: input.mimeType,
    durationMs: input.durationMs ?? null,
    expiresAt,
  })
  const presigned = await app.media.uploadUrl(slotKey(slot.id), slot.sizeBytes, expiresAt)
  const expires = Math.floor(expiresAt.getTime() / 1000)
  return {
    uploadId: slot.id,
    url: presigned ?? origin + signedPath(app.mediaKey, { variant: 'u', id: slot.id, userId: viewer.userId, expires }),
    method: 'PUT',
    // A presigned PUT signs the length, so S3 itself refuses other sizes; Parley's endpoint counts.
    headers: presigned ? { 'content-length': String(slot.sizeBytes) } : {},
    expiresAt,
  }
}

async function refuse(app: FilesApp, slot: AttachmentRecord, reason: 'size' | 'kind', message: string) {
  app.filesObserver?.refused(reason)
  await deleteSlot(app.db, slot.id)
  await app.media.remove([slotKey(slot.id), attachmentKey(slot.id), thumbnailKey(slot.id)])
  return new DomainError('BAD_USER_INPUT', message, { field: 'uploadId', reason })
}

/**
 * Completes the viewer's upload: checks the bytes and keeps them as an attachment, or refuses and
 * keeps nothing (no row, no file). Idempotent once completed. Another user's slot is NOT_FOUND.
 */
export async function completeUpload(app: FilesApp, viewer: Viewer, uploadId: string): Promise<AttachmentRecord> {
  const id = parseId(uploadId, 'Upload')
  const slot = await findAttachment(app.db, id)
  if (!slot || slot.uploaderId !== viewer.userId) throw notFound('upload')
  if (slot.completedAt) return slot
  // An expired slot is the sweeper's: completing it now could race its removal.
  if (slot.expiresAt.getTime() <= Date.now()) throw notFound('upload')
  // Moved first: a PUT still arriving on the slot's URL can no longer change the bytes inspected.
  await app.media.move(slotKey(id), attachmentKey(id))
  const result = await inspect(app.media, attachmentKey(id), slot)
  if (!result.ok) throw await refuse(app, slot, result.reason, result.message)
  if (result.thumbnail) await app.media.put(thumbnailKey(id), result.thumbnail, 'image/webp')
  // Null: a concurrent completion of the same slot won; it stored the same bytes' results.
  const completed = (await markCompleted(app.db, id, result.inspected)) ?? (await findAttachment(app.db, id))
  if (!completed?.completedAt) throw notFound('upload')
  return completed
}
