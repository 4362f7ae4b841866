import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseId } from '../../src/domain/core/ids.ts'
import { sweepAttachments } from '../../src/domain/files/index.ts'
import { newUsers, testApp } from '../support/harness.ts'
import { createGroup } from '../support/operations.ts'
import { startServer, type TestServer } from '../support/server.ts'
import { CreateUpload, onServer, pngOf, SendMedia, uploadFile } from '../support/files.ts'

let server: TestServer
beforeAll(async () => {
  server = await startServer()
})
afterAll(() => server.close())

/** Moves this test's own rows back in time: the sweeper runs on the real clock, and other files' rows stay young. */
const age = (ids: number[], hours: number) =>
  testApp().app.db.$executeRaw`UPDATE attachments SET completed_at = completed_at - make_interval(hours => ${hours}),
    expires_at = expires_at - make_interval(hours => ${hours}) WHERE id = ANY(${ids}::bigint[])`

const exists = async (id: number) => {
  const { app } = testApp()
  const row = await app.db.attachment.findUnique({ where: { id } })
  const files = await Promise.all(['u', 'a', 't'].map((v) => app.media.size(`${v}/${id}`)))
  return { row: row !== null, files: files.filter((size) => size !== null).length }
}

describe('the attachment sweeper', () => {
  it('removes attachments no message uses a day after completion, and expired slots; keeps the rest', async () => {
    const [alice] = await newUsers(1)
    const group = await createGroup(alice!, [])
    const png = await pngOf(20, 20)
    const upload = async () => (await uploadFile(alice!, server.url, png)).id
    const [unusedId, usedId, youngId] = [await upload(), await upload(), await upload()]
    const [unused, used, young] = [unusedId, usedId, youngId].map((id) => parseId(id, 'Attachment')) as [
      number,
      number,
      number,
    ]
    await alice!.run(SendMedia, {
      input: {
        conversationId: group.id,
        clientMessageId: `sweep-${used}`,
        content: { image: { attachmentId: usedId } },
      },
    })
    const slot = (
      await alice!.run(CreateUpload, { input: { name: 'a.bin', sizeBytes: 3, mimeType: 'a/b', kind: 'FILE' } })
    ).createUpload
    await fetch(onServer(slot.url, server.url), { method: 'PUT', body: new Uint8Array(3) })
    const abandoned = parseId(slot.uploadId, 'Upload')
    await age([unused, used, abandoned], 25)

    expect(await exists(unused)).toEqual({ row: true, files: 2 })
    expect(await sweepAttachments(testApp().app)).toBeGreaterThanOrEqual(2)
    expect(await exists(unused)).toEqual({ row: false, files: 0 })
    expect(await exists(abandoned)).toEqual({ row: false, files: 0 })
    expect(await exists(used)).toEqual({ row: true, files: 2 })
    expect(await exists(young)).toEqual({ row: true, files: 2 })
  })

  it('lets several instances sweep at once without removing anything twice or failing', async () => {
    const [alice] = await newUsers(1)
    const png = await pngOf(8, 8)
    const ids = await Promise.all(
      Array.from({ length: 6 }, async () => parseId((await uploadFile(alice!, server.url, png)).id, 'Attachment')),
    )
    await age(ids, 25)
    await Promise.all([
      sweepAttachments(testApp().app),
      sweepAttachments(testApp().app),
      sweepAttachments(testApp().app),
    ])
    for (const id of ids) expect(await exists(id)).toEqual({ row: false, files: 0 })
  })
})
