import { randomUUID } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { mkdir, open, rename, rm, stat, type FileHandle } from 'node:fs/promises'
import path from 'node:path'
import type { Readable } from 'node:stream'
import type { ByteRange, MediaStore, WriteOutcome } from './mediaStore.ts'

/**
 * Files on disk under `root` (DATA_DIR/media). A write goes to a temporary file in `root/tmp`, is
 * fsynced and renamed into place, so a reader sees a whole file or none, after a crash too; the
 * directory is fsynced as well so the rename itself survives one.
 */
export function localMediaStore(root: string): MediaStore {
  const tmp = path.join(root, 'tmp')
  const file = (key: string) => path.join(root, ...key.split('/'))
  const missing = (error: unknown) => (error as NodeJS.ErrnoException).code === 'ENOENT'

  async function syncDir(dir: string): Promise<void> {
    const handle = await open(dir, 'r')
    try {
      await handle.sync()
    } finally {
      await handle.close()
    }
  }

  async function place(key: string, fill: (handle: FileHandle) => Promise<boolean>) {
    await mkdir(tmp, { recursive: true })
    const temp = path.join(tmp, randomUUID())
    const handle = await open(temp, 'wx')
    let kept = false
    try {
      if (!(await fill(handle))) return false
      await handle.sync()
      await handle.close()
      const target = file(key)
      await mkdir(path.dirname(target), { recursive: true })
      await rename(temp, target)
      await syncDir(path.dirname(target))
      kept = true
      return true
    } finally {
      // close() twice is harmless; the temporary file goes whenever it did not become the object.
      await handle.close().catch(() => {})
      if (!kept) await rm(temp, { force: true })
    }
  }

  return {
    kind: 'local',
    uploadUrl: async () => null,
    async write(key, body, sizeBytes): Promise<WriteOutcome> {
      let outcome: WriteOutcome = 'too-short'
      await place(key, async (handle) => {
        let seen = 0
        // One chunk in memory at a time: the next is read once this one is on disk. The request is
        // not destroyed on a body too long, so the server can still answer it 413.
        for await (const chunk of body.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>) {
          seen += chunk.length
          if (seen > sizeBytes) {
            outcome = 'too-large'
            return false
          }
          await handle.write(chunk)
        }
        if (seen === sizeBytes) outcome = 'written'
        return seen === sizeBytes
      })
      return outcome
    },
    async put(key, bytes) {
      await place(key, async (handle) => {
        await handle.writeFile(bytes)
        return true
      })
    },
    async size(key) {
      try {
        return (await stat(file(key))).size
      } catch (error) {
        if (missing(error)) return null
        throw error
      }
    },
    read: async (key, range?: ByteRange): Promise<Readable> =>
      createReadStream(file(key), range ? { start: range.start, end: range.end } : {}),
    async move(from, to) {
      try {
        await mkdir(path.dirname(file(to)), { recursive: true })
        await rename(file(from), file(to))
        await syncDir(path.dirname(file(to)))
      } catch (error) {
        if (!missing(error)) throw error
      }
    },
    async remove(keys) {
      await Promise.all(keys.map((key) => rm(file(key), { force: true })))
    },
    downloadUrl: async () => null,
  }
}
