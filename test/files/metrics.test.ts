import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createMetrics } from '../../src/ops/metrics.ts'
import { newUser } from '../support/harness.ts'
import { startServer, type TestServer } from '../support/server.ts'
import { CompleteUpload, CreateUpload, onServer, pngOf, put, uploadFile } from '../support/files.ts'

let server: TestServer
beforeAll(async () => {
  server = await startServer(undefined, { metrics: createMetrics(), serveMetrics: true })
})
afterAll(() => server.close())

const scrape = async () => {
  const text = await (await fetch(new URL('/metrics', server.url))).text()
  const value = (series: string) =>
    Number(new RegExp(`^${series.replace(/[{}]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1] ?? 0)
  return {
    refused: (reason: string) => value(`parley_uploads_refused_total{reason="${reason}"}`),
    stored: value('parley_media_bytes_stored'),
    largestUser: value('parley_media_user_bytes_max'),
  }
}

describe('the files metrics', () => {
  it('count refused uploads by reason and report the bytes stored', async () => {
    const alice = await newUser()
    const before = await scrape()
    const png = await pngOf(64, 64)
    await uploadFile(alice, server.url, png)

    const text = new TextEncoder().encode('words')
    const slot = (
      await alice.run(CreateUpload, {
        input: { name: 'a.png', sizeBytes: text.length, mimeType: 'image/png', kind: 'IMAGE' },
      })
    ).createUpload
    expect((await put(onServer(slot.url, server.url), new Uint8Array(50))).status).toBe(413)
    await put(onServer(slot.url, server.url), text)
    await alice.try(CompleteUpload, { uploadId: slot.uploadId })

    const after = await scrape()
    expect(after.refused('kind')).toBeGreaterThan(before.refused('kind'))
    expect(after.refused('too-large')).toBeGreaterThan(before.refused('too-large'))
    expect(after.stored).toBeGreaterThanOrEqual(before.stored + png.length)
    expect(after.largestUser).toBeGreaterThanOrEqual(png.length)
  })
})
