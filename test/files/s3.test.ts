import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { TypedDocumentNode } from '@graphql-typed-document-node/core'
import { print } from 'graphql'
import S3rver from 's3rver'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApp } from '../../src/app.ts'
import { s3MediaStore } from '../../src/domain/files/index.ts'
import { createRealtime } from '../../src/realtime/pubsub.ts'
import { AUTH_SECRET, codes, newUser, testApp, type GraphQLResponse } from '../support/harness.ts'
import { startServer, type TestServer } from '../support/server.ts'
import { CompleteUpload, CreateUpload, pngOf, sha256 } from '../support/files.ts'

/**
 * The S3 store against s3rver, an S3-protocol server the test starts on loopback. What s3rver does
 * not prove is in README.md ("Files").
 */
let s3: S3rver
let dir: string
let server: TestServer
let graphqlUrl: string

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'parley-s3rver-'))
  s3 = new S3rver({
    address: '127.0.0.1',
    port: 0,
    directory: dir,
    silent: true,
    configureBuckets: [{ name: 'media' }],
  })
  const { port } = await s3.run()
  const { db, settings } = testApp().app
  const app = createApp({
    db,
    realtime: createRealtime(),
    settings,
    authSecret: AUTH_SECRET,
    media: s3MediaStore({
      bucket: 'media',
      endpoint: `http://127.0.0.1:${port}`,
      region: 'us-east-1',
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    }),
  })
  server = await startServer(app)
  graphqlUrl = server.url
})
afterAll(async () => {
  await server?.close()
  await s3?.close()
  await rm(dir, { recursive: true, force: true })
})

/** GraphQL on the S3-backed server itself (the harness's shared app keeps files on disk). */
async function run<T, V>(token: string, document: TypedDocumentNode<T, V>, variables: V): Promise<GraphQLResponse<T>> {
  const response = await fetch(graphqlUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query: print(document), variables }),
  })
  return (await response.json()) as GraphQLResponse<T>
}

describe('the S3 store', () => {
  it('takes the bytes by a presigned PUT and gives them back by a presigned GET behind the access check', async () => {
    const alice = await newUser()
    const png = await pngOf(500, 250)
    const created = await run(alice.token, CreateUpload, {
      input: { name: 'sky.png', sizeBytes: png.length, mimeType: 'image/png', kind: 'IMAGE' },
    })
    const slot = created.data!.createUpload
    expect(new URL(slot.url).host).not.toBe(new URL(graphqlUrl).host)
    expect(slot.headers).toEqual({ 'content-length': String(png.length) })
    const stored = await fetch(slot.url, { method: 'PUT', body: png, headers: slot.headers as Record<string, string> })
    expect(stored.status).toBe(200)

    const completed = await run(alice.token, CompleteUpload, { uploadId: slot.uploadId })
    if (completed.errors) throw new Error(JSON.stringify(completed.errors))
    const attachment = completed.data!.completeUpload
    expect(attachment).toMatchObject({ sha256: sha256(png), width: 500 })

    // Parley checks the signature and access, then redirects to a presigned GET of the store.
    const redirect = await fetch(attachment.url, { redirect: 'manual' })
    expect(redirect.status).toBe(302)
    const location = redirect.headers.get('location')!
    expect(new URL(location).host).not.toBe(new URL(graphqlUrl).host)
    const download = await fetch(location)
    expect(download.headers.get('content-type')).toBe('image/png')
    expect(sha256(new Uint8Array(await download.arrayBuffer()))).toBe(sha256(png))

    const thumbnail = await fetch(attachment.thumbnailUrl!)
    expect((await sharp(Buffer.from(await thumbnail.arrayBuffer())).metadata()).width).toBe(320)

    const ranged = await fetch(attachment.url, { headers: { range: 'bytes=0-7' } })
    expect(ranged.status).toBe(206)
    expect(Buffer.from(await ranged.arrayBuffer())).toEqual(png.subarray(0, 8))

    const tampered = new URL(attachment.url)
    tampered.searchParams.set('e', String(Number(tampered.searchParams.get('e')) + 1))
    expect((await fetch(tampered, { redirect: 'manual' })).status).toBe(403)
  })

  it('keeps nothing of a refused upload', async () => {
    const alice = await newUser()
    const text = new TextEncoder().encode('not an image at all')
    const created = await run(alice.token, CreateUpload, {
      input: { name: 'a.png', sizeBytes: text.length, mimeType: 'image/png', kind: 'IMAGE' },
    })
    const slot = created.data!.createUpload
    await fetch(slot.url, { method: 'PUT', body: text, headers: slot.headers as Record<string, string> })
    const refused = await run(alice.token, CompleteUpload, { uploadId: slot.uploadId })
    expect(codes(refused)).toEqual(['BAD_USER_INPUT'])
    const id = slot.uploadId
    expect(codes(await run(alice.token, CompleteUpload, { uploadId: id }))).toEqual(['NOT_FOUND'])
  })
})
