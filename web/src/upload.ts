import type { Client } from '@urql/vue'
import { CompleteUpload, CreateUpload } from './mutations.ts'

/** createUpload → PUT the bytes to the signed URL → completeUpload: the attachment's id to send. */
export async function uploadFile(client: Client, file: File): Promise<string> {
  const kind = file.type.startsWith('image/') ? 'IMAGE' : 'FILE'
  const slot = await client
    .mutation(CreateUpload, {
      input: { name: file.name, sizeBytes: file.size, mimeType: file.type || 'application/octet-stream', kind },
    })
    .toPromise()
  if (!slot.data) throw new Error(slot.error?.message ?? 'createUpload failed')
  const { uploadId, url, method, headers } = slot.data.createUpload
  const put = await fetch(url, { method, headers: headers as Record<string, string>, body: file })
  if (!put.ok) throw new Error(`upload failed (${put.status})`)
  const done = await client.mutation(CompleteUpload, { id: uploadId }).toPromise()
  if (!done.data) throw new Error(done.error?.message ?? 'completeUpload failed')
  return done.data.completeUpload.id
}
