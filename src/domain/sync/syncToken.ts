import { z } from 'zod'
import { badInput } from '../core/errors.ts'
import type { Snapshot, SyncKey, SyncRange } from '../../store/sync.ts'

/**
 * Sync tokens (decision 0080): opaque to clients, base64url JSON inside. A token is the viewer's id
 * and the database snapshot everything before it was read at; a token in the middle of a
 * difference (hasMore, or a viewerUpdates payload) adds the batch's snapshot and where it stopped,
 * and a live stream's token the conversations it delivered past its snapshot. Nothing in it is
 * trusted beyond the viewer's own rows: a forged snapshot can only re-send or skip the forger's data.
 */
export type SyncPosition = { userId: number; range: SyncRange }

// xmin:xmax:xip,… with xmin ≤ every xip < xmax (PostgreSQL checks the rest when it parses it).
const SNAPSHOT = /^(\d{1,20}):(\d{1,20}):((?:\d{1,20},)*\d{1,20})?$/
const snapshot = z
  .string()
  .max(20_000)
  .refine((s) => {
    const m = SNAPSHOT.exec(s)
    if (!m) return false
    const [xmin, xmax] = [BigInt(m[1]!), BigInt(m[2]!)]
    return (
      xmin <= xmax &&
      (m[3] ?? '')
        .split(',')
        .filter(Boolean)
        .every((x) => BigInt(x) >= xmin && BigInt(x) < xmax)
    )
  })
const id = z.number().int().positive().max(Number.MAX_SAFE_INTEGER)
const seq = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER)

const tokenSchema = z.strictObject({
  v: z.literal(1),
  u: id,
  s: snapshot,
  m: snapshot.optional(),
  k: z.tuple([z.string().regex(/^\d{1,20}$/), z.number().int().min(0).max(2), seq, seq, z.string().max(16)]).optional(),
  f: z
    .array(z.tuple([id, seq]))
    .max(1000)
    .optional(),
})

/**
 * Encodes the tokens of one range that differ only in where they stopped (`after`), such as every
 * payload of one difference read: the rest of the body is serialized once.
 */
export function syncTokenEncoder(userId: number, range: Omit<SyncRange, 'after'>): (after: SyncKey | null) => string {
  const head = `{"v":1,"u":${JSON.stringify(userId)},"s":${JSON.stringify(range.since)}`
  const mid = range.mid ? `,"m":${JSON.stringify(range.mid)},"k":` : null
  const tail = `${range.floors.length ? `,"f":${JSON.stringify(range.floors)}` : ''}}`
  return (k) =>
    Buffer.from(
      mid !== null && k
        ? `${head}${mid}${JSON.stringify([k.xid, k.kind, k.conversationId, k.seq, k.action])}${tail}`
        : head + tail,
    ).toString('base64url')
}

export const encodeSyncToken = ({ userId, range }: SyncPosition): string => syncTokenEncoder(userId, range)(range.after)

/** The position a token names, for `userId` only: malformed or another user's token is BAD_USER_INPUT. */
export function decodeSyncToken(token: string, userId: number, field: string): SyncPosition {
  let parsed: z.infer<typeof tokenSchema>
  try {
    const decoded = tokenSchema.safeParse(JSON.parse(Buffer.from(token, 'base64url').toString('utf8')))
    if (!decoded.success || (decoded.data.m === undefined) !== (decoded.data.k === undefined))
      throw new Error('malformed')
    parsed = decoded.data
  } catch {
    throw badInput(`${field} is not a sync token`, field)
  }
  if (parsed.u !== userId) throw badInput(`${field} belongs to another user`, field)
  const k = parsed.k
  const after: SyncKey | null = k ? { xid: k[0], kind: k[1], conversationId: k[2], seq: k[3], action: k[4] } : null
  return { userId, range: { since: parsed.s, mid: parsed.m ?? null, after, floors: parsed.f ?? [] } }
}

/** The token of a snapshot with nothing pending. */
export const tokenAt = (userId: number, snapshot: Snapshot): string =>
  encodeSyncToken({ userId, range: { since: snapshot, mid: null, after: null, floors: [] } })
