import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { signedPath } from '../../src/domain/files/signing.ts'
import { codes, newUser, testApp } from '../support/harness.ts'
import { startServer, type TestServer } from '../support/server.ts'
import { CompleteUpload, CreateUpload, onServer, pngOf, put, sha256, uploadFile } from '../support/files.ts'
import { parseId } from '../../src/domain/core/ids.ts'

let server: TestServer
beforeAll(async () => {
  server = await startServer()
})
afterAll(() => server.close())

const slotFor = async (
  user: Awaited<ReturnType<typeof newUser>>,
  bytes: Uint8Array,
  kind: 'IMAGE' | 'FILE' = 'IMAGE',
) =>
  (await user.run(CreateUpload, { input: { name: 'x.png', sizeBytes: bytes.length, mimeType: 'image/png', kind } }))
    .createUpload

describe('an upload', () => {
  it('of a PNG comes back with its dimensions, a thumbnail of at most 320 px, and the same bytes', async () => {
    const alice = await newUser()
    const png = await pngOf(1000, 400)
    // The declared type is not trusted: the bytes say PNG.
    const attachment = await uploadFile(alice, server.url, png, { name: 'holiday.png', mimeType: 'text/plain' })
    expect(attachment).toMatchObject({
      kind: 'IMAGE',
      name: 'holiday.png',
      mimeType: 'image/png',
      sizeBytes: png.length,
      sha256: sha256(png),
      width: 1000,
      height: 400,
      durationMs: null,
      uploadedBy: { id: alice.id },
    })
    const download = await fetch(onServer(attachment.url, server.url))
    expect(download.status).toBe(200)
    expect(download.headers.get('content-type')).toBe('image/png')
    expect(download.headers.get('x-content-type-options')).toBe('nosniff')
    expect(download.headers.get('content-disposition')).toMatch(/^inline/)
    expect(sha256(new Uint8Array(await download.arrayBuffer()))).toBe(sha256(png))

    const thumbnail = await fetch(onServer(attachment.thumbnailUrl!, server.url))
    expect(thumbnail.status).toBe(200)
    const meta = await sharp(Buffer.from(await thumbnail.arrayBuffer())).metadata()
    expect([meta.width, meta.height]).toEqual([320, 128])
  })

  it('is completed once: a repeat returns the same attachment', async () => {
    const alice = await newUser()
    const png = await pngOf(10, 10)
    const slot = await slotFor(alice, png)
    expect((await put(onServer(slot.url, server.url), png)).status).toBe(200)
    const first = (await alice.run(CompleteUpload, { uploadId: slot.uploadId })).completeUpload
    const again = (await alice.run(CompleteUpload, { uploadId: slot.uploadId })).completeUpload
    expect(again.id).toBe(first.id)
    expect(again.sha256).toBe(first.sha256)
    // Its bytes cannot change any more.
    expect((await put(onServer(slot.url, server.url), png)).status).toBe(409)
  })

  it('of text declared as an IMAGE is refused, and nothing of it is kept', async () => {
    const alice = await newUser()
    const text = new TextEncoder().encode('just some words, not a picture')
    const slot = await slotFor(alice, text)
    expect((await put(onServer(slot.url, server.url), text)).status).toBe(200)
    const refused = await alice.try(CompleteUpload, { uploadId: slot.uploadId })
    expect(codes(refused)).toEqual(['BAD_USER_INPUT'])
    expect(codes(await alice.try(CompleteUpload, { uploadId: slot.uploadId }))).toEqual(['NOT_FOUND'])
    const id = parseId(slot.uploadId, 'Upload')
    const { app } = testApp()
    expect(await app.db.attachment.findUnique({ where: { id } })).toBeNull()
    expect(await Promise.all(['u', 'a', 't'].map((v) => app.media.size(`${v}/${id}`)))).toEqual([null, null, null])
  })

  it('of an SVG is never an IMAGE', async () => {
    const alice = await newUser()
    const svg = new TextEncoder().encode(
      '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(1)</script></svg>',
    )
    const slot = await slotFor(alice, svg)
    await put(onServer(slot.url, server.url), svg)
    expect(codes(await alice.try(CompleteUpload, { uploadId: slot.uploadId }))).toEqual(['BAD_USER_INPUT'])
  })

  it('of any bytes as a FILE is sent as a download, typed by its bytes', async () => {
    const alice = await newUser()
    const text = new TextEncoder().encode('<html><script>alert(1)</script></html>')
    const file = await uploadFile(alice, server.url, text, {
      name: 'notes "v2".html',
      kind: 'FILE',
      mimeType: 'text/html',
    })
    expect(file.mimeType).toBe('application/octet-stream')
    expect([file.width, file.thumbnailUrl]).toEqual([null, null])
    const download = await fetch(onServer(file.url, server.url))
    expect(download.headers.get('content-type')).toBe('application/octet-stream')
    expect(download.headers.get('content-disposition')).toBe(
      `attachment; filename="notes _v2_.html"; filename*=UTF-8''notes%20%22v2%22.html`,
    )
    expect(await download.text()).toBe('<html><script>alert(1)</script></html>')
  })

  it('takes exactly the declared bytes: more is 413, fewer 400, and a retried PUT then works', async () => {
    const alice = await newUser()
    const png = await pngOf(20, 20)
    const slot = await slotFor(alice, png)
    const url = onServer(slot.url, server.url)
    expect((await put(url, Buffer.concat([png, Buffer.from('extra')]))).status).toBe(413)
    expect((await put(url, png.subarray(0, 10))).status).toBe(400)
    expect(codes(await alice.try(CompleteUpload, { uploadId: slot.uploadId }))).toEqual(['BAD_USER_INPUT'])

    const retry = await slotFor(alice, png)
    const retryUrl = onServer(retry.url, server.url)
    expect((await put(retryUrl, Buffer.concat([png, png]))).status).toBe(413)
    expect((await put(retryUrl, png)).status).toBe(200)
    expect((await alice.run(CompleteUpload, { uploadId: retry.uploadId })).completeUpload.sha256).toBe(sha256(png))
  })

  it('streamed without a length is cut off at the declared size with 413', async () => {
    const alice = await newUser()
    const slot = await slotFor(alice, new Uint8Array(100), 'FILE')
    const body = new ReadableStream({
      start(controller) {
        controller.enqueue(new Uint8Array(80))
        controller.enqueue(new Uint8Array(80))
        controller.close()
      },
    })
    const response = await fetch(onServer(slot.url, server.url), { method: 'PUT', body, duplex: 'half' } as RequestInit)
    expect(response.status).toBe(413)
  })

  it('completed without its bytes is refused', async () => {
    const alice = await newUser()
    const slot = await slotFor(alice, new Uint8Array(10), 'FILE')
    expect(codes(await alice.try(CompleteUpload, { uploadId: slot.uploadId }))).toEqual(['BAD_USER_INPUT'])
  })

  it('of another user is NOT_FOUND to complete', async () => {
    const [alice, bob] = [await newUser(), await newUser()]
    const png = await pngOf(10, 10)
    const slot = await slotFor(alice, png)
    await put(onServer(slot.url, server.url), png)
    expect(codes(await bob.try(CompleteUpload, { uploadId: slot.uploadId }))).toEqual(['NOT_FOUND'])
  })

  it.each([
    ['over MAX_UPLOAD_BYTES', { sizeBytes: 104_857_601 }],
    ['empty', { sizeBytes: 0 }],
    ['an empty name', { name: ' ' }],
    ['a name with a path', { name: '../etc/passwd' }],
    ['a name with a Windows path', { name: 'C:\\x.png' }],
    ['a malformed mimeType', { mimeType: 'png' }],
  ])('is refused with %s', async (_what, change) => {
    const alice = await newUser()
    const input = { name: 'a.png', sizeBytes: 10, mimeType: 'image/png', kind: 'IMAGE' as const, ...change }
    expect(codes(await alice.try(CreateUpload, { input }))).toEqual(['BAD_USER_INPUT'])
  })
})

describe('a download URL', () => {
  it('is refused with 403 when tampered with or expired', async () => {
    const alice = await newUser()
    const attachment = await uploadFile(alice, server.url, await pngOf(10, 10))
    const url = new URL(onServer(attachment.url, server.url))
    const flip = (s: string) => (s[0] === 'A' ? 'B' : 'A') + s.slice(1)
    const tampered = [
      (u: URL) => u.searchParams.set('s', flip(u.searchParams.get('s')!)),
      (u: URL) => u.searchParams.set('e', String(Number(u.searchParams.get('e')) + 3600)),
      (u: URL) => u.searchParams.set('v', '1'),
      (u: URL) => (u.pathname = u.pathname.replace(/\d+$/, (id) => String(Number(id) + 1))),
      (u: URL) => u.searchParams.delete('s'),
    ]
    for (const change of tampered) {
      const copy = new URL(url)
      change(copy)
      expect((await fetch(copy)).status, copy.toString()).toBe(403)
    }
    const { app } = testApp()
    const target = {
      variant: 'a' as const,
      id: Number(url.pathname.split('/').pop()),
      userId: Number(url.searchParams.get('v')),
    }
    const expired = signedPath(app.mediaKey, { ...target, expires: Math.floor(Date.now() / 1000) - 1 })
    expect((await fetch(new URL(expired, server.url))).status).toBe(403)
    const valid = signedPath(app.mediaKey, { ...target, expires: Math.floor(Date.now() / 1000) + 60 })
    expect((await fetch(new URL(valid, server.url))).status).toBe(200)
  })

  it('answers Range requests with 206 and the bytes asked for', async () => {
    const alice = await newUser()
    const bytes = Buffer.from(Array.from({ length: 1000 }, (_, i) => i % 251))
    const file = await uploadFile(alice, server.url, bytes, { name: 'data.bin', kind: 'FILE' })
    const url = onServer(file.url, server.url)
    const ranged = async (range: string) => fetch(url, { headers: { range } })

    const middle = await ranged('bytes=100-199')
    expect(middle.status).toBe(206)
    expect(middle.headers.get('content-range')).toBe('bytes 100-199/1000')
    expect(Buffer.from(await middle.arrayBuffer())).toEqual(bytes.subarray(100, 200))

    const tail = await ranged('bytes=-10')
    expect(tail.headers.get('content-range')).toBe('bytes 990-999/1000')
    expect(Buffer.from(await tail.arrayBuffer())).toEqual(bytes.subarray(990))

    const open = await ranged('bytes=995-')
    expect(Buffer.from(await open.arrayBuffer())).toEqual(bytes.subarray(995))

    const beyond = await ranged('bytes=1000-')
    expect(beyond.status).toBe(416)
    expect(beyond.headers.get('content-range')).toBe('bytes */1000')

    const whole = await fetch(url)
    expect(whole.headers.get('accept-ranges')).toBe('bytes')
    expect(whole.headers.get('content-length')).toBe('1000')
  })
})
