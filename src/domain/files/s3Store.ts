import type { Readable } from 'node:stream'
import {
  CopyObjectCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3'
import { getSignedUrl } from '@aws-sdk/s3-request-presigner'
import type { MediaStore } from './mediaStore.ts'

/** A presigned GET is used right away (Parley redirects to it), so a minute is plenty. */
const REDIRECT_LIFETIME_S = 60

export type S3Options = {
  bucket: string
  /** An S3-compatible server's URL (MinIO, R2, s3rver…); unset: AWS itself. Path-style when set. */
  endpoint?: string
  region: string
  /** Unset in production: the SDK reads the standard AWS variables (AWS_ACCESS_KEY_ID, …, or a role). */
  credentials?: { accessKeyId: string; secretAccessKey: string }
}

const absent = (error: unknown) =>
  error instanceof S3ServiceException && (error.$metadata.httpStatusCode === 404 || error.name === 'NoSuchKey')

/**
 * An S3-compatible bucket: clients PUT a slot's bytes and GET an attachment's by presigned URLs, so
 * the bytes never pass through Parley except when completion reads them (hash, type, thumbnail).
 * Every call has a timeout: a store that stops answering fails the one request, not the process.
 */
export function s3MediaStore(opts: S3Options): MediaStore {
  const client = new S3Client({
    region: opts.region,
    endpoint: opts.endpoint,
    forcePathStyle: opts.endpoint !== undefined,
    credentials: opts.credentials,
    maxAttempts: 3,
    requestHandler: { connectionTimeout: 5_000, requestTimeout: 30_000 },
  })
  const Bucket = opts.bucket
  const put = (Key: string, Body: Readable | Buffer, ContentLength: number, ContentType?: string) =>
    client.send(new PutObjectCommand({ Bucket, Key, Body, ContentLength, ContentType }))

  return {
    kind: 's3',
    // The length is signed: S3 refuses a PUT of any other size.
    uploadUrl: (Key, size, expiresAt) =>
      getSignedUrl(client, new PutObjectCommand({ Bucket, Key, ContentLength: size }), {
        expiresIn: Math.max(1, Math.floor((expiresAt.getTime() - Date.now()) / 1000)),
        signableHeaders: new Set(['content-length']),
      }),
    async write(key, body, sizeBytes) {
      await put(key, body, sizeBytes)
      return 'written'
    },
    async put(key, bytes, contentType) {
      await put(key, bytes, bytes.length, contentType)
    },
    async size(Key) {
      try {
        return (await client.send(new HeadObjectCommand({ Bucket, Key }))).ContentLength ?? 0
      } catch (error) {
        if (absent(error)) return null
        throw error
      }
    },
    async read(Key, range) {
      const Range = range ? `bytes=${range.start}-${range.end}` : undefined
      return (await client.send(new GetObjectCommand({ Bucket, Key, Range }))).Body as Readable
    },
    // Keys are Parley's own ASCII ("u/12"), so the copy source needs no escaping.
    async move(from, to) {
      try {
        await client.send(new CopyObjectCommand({ Bucket, Key: to, CopySource: `${Bucket}/${from}` }))
      } catch (error) {
        if (absent(error)) return
        throw error
      }
      await client.send(new DeleteObjectCommand({ Bucket, Key: from }))
    },
    async remove(keys) {
      await Promise.all(keys.map((Key) => client.send(new DeleteObjectCommand({ Bucket, Key }))))
    },
    downloadUrl: (Key, headers) =>
      getSignedUrl(
        client,
        new GetObjectCommand({
          Bucket,
          Key,
          ResponseContentType: headers.contentType,
          ResponseContentDisposition: headers.disposition,
        }),
        { expiresIn: REDIRECT_LIFETIME_S },
      ),
  }
}
