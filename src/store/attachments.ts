import { membershipOf, notRecalled, visibleTo } from './fragments.ts'
import { bigintArray, Prisma, type Conn } from './sql.ts'

export type AttachmentKind = 'IMAGE' | 'AUDIO' | 'VIDEO' | 'FILE'

/** An upload slot (completedAt null) or the attachment it became. */
export type AttachmentRecord = {
  id: number
  uploaderId: number
  kind: AttachmentKind
  name: string
  sizeBytes: number
  declaredMime: string
  mimeType: string | null
  sha256: string | null
  width: number | null
  height: number | null
  durationMs: number | null
  hasThumbnail: boolean
  expiresAt: Date
  completedAt: Date | null
  createdAt: Date
}

/** What completion learns from the bytes. */
export type Inspected = Pick<AttachmentRecord, 'mimeType' | 'sha256' | 'width' | 'height' | 'hasThumbnail'>

const COLUMNS = Prisma.sql`a.id, a.uploader_id AS "uploaderId", a.kind, a.name, a.size_bytes AS "sizeBytes",
  a.declared_mime AS "declaredMime", a.mime_type AS "mimeType", a.sha256, a.width, a.height,
  a.duration_ms AS "durationMs", a.has_thumbnail AS "hasThumbnail", a.expires_at AS "expiresAt",
  a.completed_at AS "completedAt", a.created_at AS "createdAt"`

type Row = Omit<AttachmentRecord, 'id' | 'uploaderId' | 'sizeBytes'> & {
  id: bigint
  uploaderId: bigint
  sizeBytes: bigint
}
const toRecord = (r: Row): AttachmentRecord => ({
  ...r,
  id: Number(r.id),
  uploaderId: Number(r.uploaderId),
  sizeBytes: Number(r.sizeBytes),
})

export async function insertUpload(
  conn: Conn,
  u: Pick<AttachmentRecord, 'uploaderId' | 'kind' | 'name' | 'sizeBytes' | 'declaredMime' | 'durationMs' | 'expiresAt'>,
): Promise<AttachmentRecord> {
  const [row] = await conn.$queryRaw<Row[]>`
    INSERT INTO attachments AS a (uploader_id, kind, name, size_bytes, declared_mime, duration_ms, expires_at)
    VALUES (${u.uploaderId}, ${u.kind}::"AttachmentKind", ${u.name}, ${u.sizeBytes}, ${u.declaredMime},
      ${u.durationMs}, ${u.expiresAt})
    RETURNING ${COLUMNS}`
  return toRecord(row!)
}

export async function findAttachment(conn: Conn, id: number): Promise<AttachmentRecord | null> {
  const [row] = await conn.$queryRaw<Row[]>`SELECT ${COLUMNS} FROM attachments a WHERE a.id = ${id}`
  return row ? toRecord(row) : null
}

/** A completed attachment `uploaderId` uploaded, or null (someone else's, unknown, or not completed). */
export async function findOwnAttachment(conn: Conn, uploaderId: number, id: number): Promise<AttachmentRecord | null> {
  const [row] = await conn.$queryRaw<Row[]>`
    SELECT ${COLUMNS} FROM attachments a
    WHERE a.id = ${id} AND a.uploader_id = ${uploaderId} AND a.completed_at IS NOT NULL`
  return row ? toRecord(row) : null
}

/** Marks a slot completed with what its bytes showed; null when it was completed (or removed) meanwhile. */
export async function markCompleted(conn: Conn, id: number, i: Inspected): Promise<AttachmentRecord | null> {
  const [row] = await conn.$queryRaw<Row[]>`
    UPDATE attachments a SET mime_type = ${i.mimeType}, sha256 = ${i.sha256}, width = ${i.width},
      height = ${i.height}, has_thumbnail = ${i.hasThumbnail}, completed_at = now()
    WHERE a.id = ${id} AND a.completed_at IS NULL
    RETURNING ${COLUMNS}`
  return row ? toRecord(row) : null
}

/** Removes a slot that was never completed (a refused completion). */
export async function deleteSlot(conn: Conn, id: number): Promise<void> {
  await conn.$executeRaw`DELETE FROM attachments WHERE id = ${id} AND completed_at IS NULL`
}

/**
 * Whether `userId` may read attachment `id`: its uploader, a user who keeps it as a saved sticker,
 * or a reader of a message carrying it under the one visibility rule (store/fragments.ts visibleTo)
 * that is not recalled.
 */
export async function mayReadAttachment(conn: Conn, id: number, userId: number): Promise<boolean> {
  const [row] = await conn.$queryRaw<{ ok: boolean }[]>`
    SELECT EXISTS (SELECT 1 FROM attachments a WHERE a.id = ${id} AND a.completed_at IS NOT NULL
      AND (a.uploader_id = ${userId}
      OR EXISTS (SELECT 1 FROM saved_stickers s WHERE s.attachment_id = a.id AND s.user_id = ${userId})
      OR EXISTS (
        SELECT 1 FROM message_attachments ma
        JOIN messages m ON m.conversation_id = ma.conversation_id AND m.seq = ma.seq
        ${membershipOf(userId)}
        WHERE ma.attachment_id = a.id AND ${notRecalled} AND ${visibleTo({ userId })}))) AS ok`
  return row!.ok
}

/**
 * Locks (SKIP LOCKED, so instances sweeping at once take different rows) up to `limit` attachments to
 * remove: completed before `usedBefore` and carried by no message nor saved sticker, or slots never
 * completed that expired before `now`.
 */
export async function lockSweepable(
  conn: Conn,
  opts: { usedBefore: Date; now: Date; limit: number },
): Promise<number[]> {
  const rows = await conn.$queryRaw<{ id: bigint }[]>`
    SELECT a.id
    FROM attachments a
    WHERE ((a.completed_at < ${opts.usedBefore}
        AND NOT EXISTS (SELECT 1 FROM message_attachments ma WHERE ma.attachment_id = a.id)
        AND NOT EXISTS (SELECT 1 FROM saved_stickers s WHERE s.attachment_id = a.id))
      OR (a.completed_at IS NULL AND a.expires_at < ${opts.now}))
    ORDER BY a.id LIMIT ${opts.limit}
    FOR UPDATE SKIP LOCKED`
  return rows.map((r) => Number(r.id))
}

export async function deleteAttachments(conn: Conn, ids: number[]): Promise<void> {
  await conn.$executeRaw`DELETE FROM attachments WHERE id = ANY(${bigintArray(ids)})`
}

/** All completed attachments' bytes, how many users have any, and the most one user stores (the metrics). */
export async function storageTotals(conn: Conn): Promise<{ bytes: number; uploaders: number; largestUser: number }> {
  const [row] = await conn.$queryRaw<{ bytes: bigint; uploaders: bigint; largestUser: bigint }[]>`
    SELECT coalesce(sum(b), 0)::bigint AS bytes, count(*) AS uploaders, coalesce(max(b), 0)::bigint AS "largestUser"
    FROM (SELECT sum(size_bytes) AS b FROM attachments WHERE completed_at IS NOT NULL GROUP BY uploader_id) per_user`
  return { bytes: Number(row!.bytes), uploaders: Number(row!.uploaders), largestUser: Number(row!.largestUser) }
}
