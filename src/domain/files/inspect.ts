import { createHash } from 'node:crypto'
import { fileTypeFromBuffer } from 'file-type'
import sharp from 'sharp'
import type { AttachmentKind, Inspected } from '../../store/attachments.ts'
import type { MediaStore } from './mediaStore.ts'

/** The long side of a thumbnail, in pixels (the contract's "at most 320 px"). */
const THUMBNAIL_PX = 320

/** Enough of the start of a file for every format file-type knows (it reads at most a few KiB of most). */
const SNIFF_BYTES = 64 * 1024

/** Raster formats sharp reads here; anything else (SVG above all: it can carry script) is no IMAGE. */
const RASTER = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/avif', 'image/tiff'])

/** Containers of sound: audio/*, and the two that carry audio or video alike. */
const fitsKind = (kind: AttachmentKind, mime: string): boolean =>
  kind === 'FILE' ||
  (kind === 'IMAGE' && RASTER.has(mime)) ||
  (kind === 'AUDIO' && (mime.startsWith('audio/') || mime === 'video/webm' || mime === 'video/mp4')) ||
  (kind === 'VIDEO' && mime.startsWith('video/'))

export type Inspection =
  { ok: true; inspected: Inspected; thumbnail: Buffer | null } | { ok: false; reason: 'size' | 'kind'; message: string }

async function sha256Of(store: MediaStore, key: string): Promise<string> {
  const hash = createHash('sha256')
  for await (const chunk of await store.read(key)) hash.update(chunk as Buffer)
  return hash.digest('hex')
}

async function headOf(store: MediaStore, key: string, size: number): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const chunk of await store.read(key, { start: 0, end: Math.min(size, SNIFF_BYTES) - 1 }))
    chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}

/** Dimensions and a thumbnail, streamed into sharp; null when sharp cannot read it as an image. */
async function imageOf(store: MediaStore, key: string) {
  const input = sharp({ failOn: 'error' })
  const meta = input.clone().metadata()
  // rotate() applies EXIF orientation, so the thumbnail stands as the photo does.
  const thumbnail = input
    .clone()
    .rotate()
    .resize(THUMBNAIL_PX, THUMBNAIL_PX, { fit: 'inside', withoutEnlargement: true })
    .webp()
    .toBuffer()
  ;(await store.read(key)).pipe(input)
  try {
    const [{ width, height }, thumb] = await Promise.all([meta, thumbnail])
    return width && height ? { width, height, thumbnail: thumb } : null
  } catch {
    return null
  }
}

/**
 * What completion learns from the stored bytes, never from what the uploader declared: the size,
 * the type (sniffed), the sha256, and for an image its dimensions and a thumbnail.
 */
export async function inspect(
  store: MediaStore,
  key: string,
  declared: { kind: AttachmentKind; sizeBytes: number },
): Promise<Inspection> {
  const size = await store.size(key)
  if (size !== declared.sizeBytes)
    return {
      ok: false,
      reason: 'size',
      message:
        size === null
          ? 'no bytes were uploaded to this slot'
          : `the upload holds ${size} bytes, not the ${declared.sizeBytes} declared`,
    }
  const sniffed = await fileTypeFromBuffer(await headOf(store, key, size))
  const mimeType = sniffed?.mime ?? 'application/octet-stream'
  if (!fitsKind(declared.kind, mimeType))
    return { ok: false, reason: 'kind', message: `the bytes are ${mimeType}, which is not an ${declared.kind}` }
  const image = declared.kind === 'IMAGE' ? await imageOf(store, key) : null
  if (declared.kind === 'IMAGE' && !image)
    return { ok: false, reason: 'kind', message: 'the bytes are not a raster image Parley can read' }
  const sha256 = await sha256Of(store, key)
  return {
    ok: true,
    inspected: {
      mimeType,
      sha256,
      width: image?.width ?? null,
      height: image?.height ?? null,
      hasThumbnail: image !== null,
    },
    thumbnail: image?.thumbnail ?? null,
  }
}
