import type { Client } from '@urql/vue'
import type { AttachmentKind, MessageContentInput } from './gql/graphql.ts'
import { CompleteUpload, CreateUpload } from './mutations.ts'

/** Raster images the server accepts as IMAGE (it refuses SVG as one); any other image goes as a file. */
const RASTER = /^image\/(png|jpeg|gif|webp|avif|tiff)$/

/**
 * A sound or a video's length as this browser reads it, or null when it cannot play the file (it
 * then goes as a file). A recording (MediaRecorder's WebM) states no length until played through,
 * so the element seeks past the end to learn it.
 */
function durationOf(file: File, kind: 'AUDIO' | 'VIDEO'): Promise<number | null> {
  const media = document.createElement(kind === 'VIDEO' ? 'video' : 'audio')
  const url = URL.createObjectURL(file)
  return new Promise<number | null>((resolve) => {
    const done = (seconds: number | null) => {
      URL.revokeObjectURL(url)
      media.removeAttribute('src')
      resolve(seconds === null ? null : Math.max(1, Math.round(seconds * 1000)))
    }
    media.onerror = () => done(null)
    media.onloadedmetadata = () => {
      if (Number.isFinite(media.duration)) return done(media.duration)
      media.ondurationchange = () => Number.isFinite(media.duration) && done(media.duration)
      media.currentTime = Number.MAX_SAFE_INTEGER
    }
    media.preload = 'metadata'
    media.src = url
  })
}

/** The kind a file is sent as, from its type, with the length sounds and videos must declare. */
async function kindOf(file: File): Promise<{ kind: AttachmentKind; durationMs?: number }> {
  if (RASTER.test(file.type)) return { kind: 'IMAGE' }
  const media = file.type.startsWith('audio/') ? 'AUDIO' : file.type.startsWith('video/') ? 'VIDEO' : null
  const durationMs = media && (await durationOf(file, media))
  return media && durationMs ? { kind: media, durationMs } : { kind: 'FILE' }
}

/** createUpload → PUT the bytes to the signed URL → completeUpload: the content that sends it. */
export async function uploadFile(client: Client, file: File): Promise<MessageContentInput> {
  const { kind, durationMs } = await kindOf(file)
  const slot = await client
    .mutation(CreateUpload, {
      input: {
        name: file.name,
        sizeBytes: file.size,
        mimeType: file.type || 'application/octet-stream',
        kind,
        durationMs,
      },
    })
    .toPromise()
  if (!slot.data) throw new Error(slot.error?.message ?? 'createUpload failed')
  const { uploadId, url, method, headers } = slot.data.createUpload
  const put = await fetch(url, { method, headers: headers as Record<string, string>, body: file })
  if (!put.ok) throw new Error(`upload failed (${put.status})`)
  const done = await client.mutation(CompleteUpload, { id: uploadId }).toPromise()
  if (!done.data) throw new Error(done.error?.message ?? 'completeUpload failed')
  const attachmentId = done.data.completeUpload.id
  return {
    IMAGE: { image: { attachmentId } },
    AUDIO: { audio: { attachmentId } },
    VIDEO: { video: { attachmentId } },
    FILE: { file: { attachmentId } },
  }[kind]
}
