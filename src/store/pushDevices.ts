import { Prisma, bigintArray, type Conn } from './sql.ts'

export type PushPlatform = 'APNS' | 'FCM' | 'HUAWEI'

/** A push device as stored; `token` never leaves the server except to the push gateway. */
export type PushDeviceRecord = {
  id: number
  userId: number
  platform: PushPlatform
  token: string
  appId: string | null
  createdAt: Date
  lastNotifiedAt: Date | null
}

const COLUMNS = Prisma.sql`d.id, d.user_id AS "userId", d.platform::text AS platform, d.token, d.app_id AS "appId",
  d.created_at AS "createdAt", d.last_notified_at AS "lastNotifiedAt"`
type Row = Omit<PushDeviceRecord, 'id' | 'userId'> & { id: bigint; userId: bigint }
const toDevice = (r: Row): PushDeviceRecord => ({ ...r, id: Number(r.id), userId: Number(r.userId) })

const tokenHash = (token: string) => Prisma.sql`sha256(convert_to(${token}, 'UTF8'))`

/** The user's devices other than the one holding (platform, token), which registering it again would not add. */
export async function countOtherDevices(
  conn: Conn,
  userId: number,
  platform: PushPlatform,
  token: string,
): Promise<number> {
  const [row] = await conn.$queryRaw<{ n: bigint }[]>`
    SELECT count(*) AS n FROM push_devices
    WHERE user_id = ${userId} AND NOT (platform = ${platform}::"PushPlatform" AND token_sha256 = ${tokenHash(token)})`
  return Number(row!.n)
}

/** Inserts the device, or gives an existing (platform, token) to `userId` (the phone changed hands). */
export async function upsertDevice(
  conn: Conn,
  d: Pick<PushDeviceRecord, 'userId' | 'platform' | 'token' | 'appId'>,
): Promise<PushDeviceRecord> {
  const [row] = await conn.$queryRaw<Row[]>`
    INSERT INTO push_devices AS d (user_id, platform, token, token_sha256, app_id)
    VALUES (${d.userId}, ${d.platform}::"PushPlatform", ${d.token}, ${tokenHash(d.token)}, ${d.appId})
    ON CONFLICT (platform, token_sha256) DO UPDATE SET user_id = EXCLUDED.user_id, app_id = EXCLUDED.app_id,
      created_at = CASE WHEN d.user_id = EXCLUDED.user_id THEN d.created_at ELSE CURRENT_TIMESTAMP END,
      last_notified_at = CASE WHEN d.user_id = EXCLUDED.user_id THEN d.last_notified_at END
    RETURNING ${COLUMNS}`
  return toDevice(row!)
}

export async function listDevices(conn: Conn, userId: number): Promise<PushDeviceRecord[]> {
  const rows = await conn.$queryRaw<Row[]>`
    SELECT ${COLUMNS} FROM push_devices d WHERE d.user_id = ${userId} ORDER BY d.id`
  return rows.map(toDevice)
}

/** Deletes the user's device; false when it is not theirs (or gone). */
export async function deleteDevice(conn: Conn, userId: number, id: number): Promise<boolean> {
  return (await conn.$executeRaw`DELETE FROM push_devices WHERE id = ${id} AND user_id = ${userId}`) > 0
}

/** The devices of `userIds`, for a push job's chunk of recipients. */
export async function findDevicesOf(conn: Conn, userIds: readonly number[]): Promise<PushDeviceRecord[]> {
  const rows = await conn.$queryRaw<Row[]>`
    SELECT ${COLUMNS} FROM push_devices d WHERE d.user_id = ANY(${bigintArray(userIds)}) ORDER BY d.id`
  return rows.map(toDevice)
}

/** Removes devices the gateway reported invalid; returns how many went. */
export async function deleteDevicesByToken(
  conn: Conn,
  tokens: readonly { platform: PushPlatform; token: string }[],
): Promise<number> {
  if (!tokens.length) return 0
  const pairs = tokens.map((t) => Prisma.sql`(${t.platform}::"PushPlatform", ${tokenHash(t.token)})`)
  return conn.$executeRaw`DELETE FROM push_devices WHERE (platform, token_sha256) IN (${Prisma.join(pairs)})`
}

export async function markNotified(conn: Conn, ids: readonly number[], at: Date): Promise<void> {
  if (ids.length)
    await conn.$executeRaw`UPDATE push_devices SET last_notified_at = ${at} WHERE id = ANY(${bigintArray(ids)})`
}
