import type { Readable } from 'node:stream'

/** An inclusive byte range of a stored object (HTTP Range's meaning). */
export type ByteRange = { start: number; end: number }

/** How a write of a slot's bytes ended: only `written` leaves anything stored. */
export type WriteOutcome = 'written' | 'too-large' | 'too-short'

/**
 * Where the bytes of uploads, attachments and thumbnails live, by key ("u/<id>" a slot's bytes as
 * PUT, "a/<id>" an attachment's, "t/<id>" its thumbnail). Two implementations: files on disk
 * (localStore.ts) and an S3-compatible bucket (s3Store.ts). Every write is whole or absent.
 */
export type MediaStore = {
  readonly kind: 'local' | 's3'
  /** Where a client PUTs a slot's bytes itself (a presigned URL), or null when the PUT goes through Parley. */
  uploadUrl(key: string, sizeBytes: number, expiresAt: Date): Promise<string | null>
  /** Streams exactly `sizeBytes` to `key`; more or fewer bytes store nothing. */
  write(key: string, body: Readable, sizeBytes: number): Promise<WriteOutcome>
  put(key: string, bytes: Buffer, contentType: string): Promise<void>
  /** The object's size, or null when there is none. */
  size(key: string): Promise<number | null>
  read(key: string, range?: ByteRange): Promise<Readable>
  /** Renames `from` to `to`; a no-op when `from` is gone (never uploaded, or moved by a completion before). */
  move(from: string, to: string): Promise<void>
  /** Removes the objects; a missing one is no error. */
  remove(keys: string[]): Promise<void>
  /**
   * A short-lived URL from which the client reads the object itself, with these response headers, or
   * null when Parley streams the bytes.
   */
  downloadUrl(key: string, headers: { contentType: string; disposition: string }): Promise<string | null>
}
