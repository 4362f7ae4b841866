import { Prisma, type Conn } from './sql.ts'

/** What a sticker shows: a url someone else serves, or an image uploaded to Parley. */
export type StickerImage = { url: string; attachmentId: null } | { url: null; attachmentId: number }

export type SavedStickerRecord = { id: number; userId: number; label: string | null; savedAt: Date } & StickerImage

const COLUMNS = Prisma.sql`s.id, s.user_id AS "userId", s.url, s.attachment_id AS "attachmentId", s.label, s.saved_at AS "savedAt"`
type Row = {
  id: bigint
  userId: bigint
  url: string | null
  attachmentId: bigint | null
  label: string | null
  savedAt: Date
}
const toSticker = (r: Row): SavedStickerRecord =>
  ({
    ...r,
    id: Number(r.id),
    userId: Number(r.userId),
    attachmentId: r.attachmentId === null ? null : Number(r.attachmentId),
  }) as SavedStickerRecord

/** The user's sticker showing this image, and how many they have. */
export async function findStickerState(
  conn: Conn,
  userId: number,
  image: StickerImage,
): Promise<{ existing: SavedStickerRecord | null; count: number }> {
  const same =
    image.url === null ? Prisma.sql`s.attachment_id = ${image.attachmentId}` : Prisma.sql`s.url = ${image.url}`
  const [row] = await conn.$queryRaw<{ existing: Row | null; count: bigint }[]>`
    SELECT (SELECT count(*) FROM saved_stickers WHERE user_id = ${userId}) AS count,
      (SELECT row_to_json(x) FROM (SELECT ${COLUMNS} FROM saved_stickers s WHERE s.user_id = ${userId} AND ${same}) x) AS existing`
  const existing = row!.existing && toSticker({ ...row!.existing, savedAt: new Date(row!.existing.savedAt) })
  return { existing, count: Number(row!.count) }
}

export async function insertSticker(
  conn: Conn,
  s: { userId: number; label: string | null } & StickerImage,
): Promise<SavedStickerRecord> {
  const [row] = await conn.$queryRaw<Row[]>`
    INSERT INTO saved_stickers AS s (user_id, url, attachment_id, label)
    VALUES (${s.userId}, ${s.url}, ${s.attachmentId}, ${s.label}) RETURNING ${COLUMNS}`
  return toSticker(row!)
}

/** Whether the user had that sticker. */
export async function deleteSticker(conn: Conn, userId: number, id: number): Promise<boolean> {
  return (await conn.$executeRaw`DELETE FROM saved_stickers WHERE id = ${id} AND user_id = ${userId}`) > 0
}

/** The user's stickers, newest first, a page below `beforeId`. */
export async function listStickers(
  conn: Conn,
  userId: number,
  page: { beforeId: number | null; limit: number },
): Promise<SavedStickerRecord[]> {
  const rows = await conn.$queryRaw<Row[]>`
    SELECT ${COLUMNS} FROM saved_stickers s
    WHERE s.user_id = ${userId} ${page.beforeId === null ? Prisma.empty : Prisma.sql`AND s.id < ${page.beforeId}`}
    ORDER BY s.id DESC LIMIT ${page.limit}`
  return rows.map(toSticker)
}

export async function findSticker(conn: Conn, userId: number, id: number): Promise<SavedStickerRecord | null> {
  const [row] = await conn.$queryRaw<
    Row[]
  >`SELECT ${COLUMNS} FROM saved_stickers s WHERE s.id = ${id} AND s.user_id = ${userId}`
  return row ? toSticker(row) : null
}
