import { createHash } from 'node:crypto'
import sharp from 'sharp'
import { graphql } from '../gql/index.ts'
import type { TestUser } from './harness.ts'

/** Operations and helpers of the files tests (test/files/). */

export const CreateUpload = graphql(`
  mutation CreateUpload($input: CreateUploadInput!) {
    createUpload(input: $input) {
      uploadId
      url
      method
      headers
      expiresAt
    }
  }
`)

export const CompleteUpload = graphql(`
  mutation CompleteUpload($uploadId: ID!) {
    completeUpload(uploadId: $uploadId) {
      ...AttachmentFields
    }
  }
`)

// A fragment for codegen: the operations that spread it carry it in their generated documents.
graphql(`
  fragment AttachmentFields on Attachment {
    id
    kind
    name
    mimeType
    sizeBytes
    sha256
    width
    height
    durationMs
    url
    thumbnailUrl
    uploadedBy {
      id
    }
  }
`)

export const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex')

/** A PNG of `width` × `height` pixels, made here so the round trip has bytes nobody typed in. */
export const pngOf = (width: number, height: number) =>
  sharp({ create: { width, height, channels: 3, background: { r: 200, g: 30, b: 90 } } })
    .png()
    .toBuffer()

/**
 * A URL Parley signed for a request that reached it as http://parley.test (the harness's fetch),
 * pointed at the real server listening at `serverUrl`.
 */
export const onServer = (url: string, serverUrl: string) =>
  new URL(new URL(url).pathname + new URL(url).search, serverUrl).toString()

export async function put(url: string, body: Uint8Array, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, { method: 'PUT', body: body as Uint8Array<ArrayBuffer>, headers })
}

/** createUpload, PUT, completeUpload: the attachment, for a file of `kind`. */
export async function uploadFile(
  user: TestUser,
  serverUrl: string,
  bytes: Uint8Array,
  opts: { name?: string; kind?: 'IMAGE' | 'AUDIO' | 'VIDEO' | 'FILE'; mimeType?: string; durationMs?: number } = {},
) {
  const slot = (
    await user.run(CreateUpload, {
      input: {
        name: opts.name ?? 'picture.png',
        sizeBytes: bytes.length,
        mimeType: opts.mimeType ?? 'image/png',
        kind: opts.kind ?? 'IMAGE',
        durationMs: opts.durationMs,
      },
    })
  ).createUpload
  const response = await put(onServer(slot.url, serverUrl), bytes)
  if (response.status !== 200) throw new Error(`PUT answered ${response.status}: ${await response.text()}`)
  return (await user.run(CompleteUpload, { uploadId: slot.uploadId })).completeUpload
}

graphql(`
  fragment MediaContent on MessageContent {
    __typename
    ... on ImageContent {
      url
      width
      height
      sizeBytes
      thumbnailUrl
      attachment {
        ...AttachmentFields
      }
    }
    ... on AudioContent {
      url
      durationMs
      attachment {
        ...AttachmentFields
      }
    }
    ... on FileContent {
      url
      name
      mimeType
      attachment {
        ...AttachmentFields
      }
    }
    ... on StickerContent {
      stickerId
      url
      label
      attachment {
        ...AttachmentFields
      }
    }
    ... on ForwardContent {
      items {
        content {
          ... on ImageContent {
            url
            attachment {
              id
            }
          }
        }
      }
    }
  }
`)

export const SendMedia = graphql(`
  mutation SendMedia($input: SendMessageInput!) {
    sendMessage(input: $input) {
      message {
        id
        seq
        content {
          ...MediaContent
        }
      }
    }
  }
`)

export const ReadMedia = graphql(`
  query ReadMedia($id: ID!, $seq: SafeInt!) {
    conversation(id: $id) {
      message(seq: $seq) {
        status
        content {
          ...MediaContent
        }
      }
    }
  }
`)

export const AttachmentNode = graphql(`
  query AttachmentNode($id: ID!) {
    node(id: $id) {
      ... on Attachment {
        url
        sha256
      }
    }
  }
`)
