import { createHmac, timingSafeEqual } from 'node:crypto'

/**
 * Parley's own media URLs: /media/<variant>/<id>?v=<user>&e=<expiry>&s=<signature>, where the
 * signature is an HMAC-SHA256 of variant, id, user and expiry under a key derived from AUTH_SECRET
 * (so a token's key never signs a URL and the other way round). No header is needed, so <img src>
 * works; a changed character or a past expiry is refused (decision 0273).
 */
export type MediaVariant = 'u' | 'a' | 't'

/** A download URL lives 10 to 15 minutes: its expiry is rounded up to 5 minutes, so the URLs one viewer reads within those 5 minutes are the same and a browser's cache keeps them. */
const DOWNLOAD_LIFETIME_S = 10 * 60
const DOWNLOAD_ROUNDING_S = 5 * 60

export const MEDIA_PATH = '/media/'

export const deriveMediaKey = (authSecret: string | Buffer): Buffer =>
  createHmac('sha256', authSecret).update('parley media urls v1').digest()

export type SignedTarget = { variant: MediaVariant; id: number; userId: number; expires: number }

const signature = (key: Buffer, t: SignedTarget) =>
  createHmac('sha256', key).update(`${t.variant}/${t.id}/${t.userId}/${t.expires}`).digest('base64url')

/** The path and query of a signed URL (append to the server's origin). */
export const signedPath = (key: Buffer, t: SignedTarget) =>
  `${MEDIA_PATH}${t.variant}/${t.id}?v=${t.userId}&e=${t.expires}&s=${signature(key, t)}`

/** The expiry of a download URL signed now. */
export const downloadExpiry = (nowMs = Date.now()) =>
  Math.ceil((nowMs / 1000 + DOWNLOAD_LIFETIME_S) / DOWNLOAD_ROUNDING_S) * DOWNLOAD_ROUNDING_S

/** The target a media URL names when its signature holds and it has not expired, else null. */
export function verifySignedUrl(key: Buffer, url: URL, nowMs = Date.now()): SignedTarget | null {
  const match = /^\/media\/([uat])\/([1-9][0-9]{0,15})$/.exec(url.pathname)
  const [userId, expires] = [url.searchParams.get('v'), url.searchParams.get('e')].map(Number)
  const given = url.searchParams.get('s') ?? ''
  if (!match || !Number.isSafeInteger(userId) || !Number.isSafeInteger(expires)) return null
  const target: SignedTarget = {
    variant: match[1] as MediaVariant,
    id: Number(match[2]),
    userId: userId!,
    expires: expires!,
  }
  const expected = Buffer.from(signature(key, target))
  const actual = Buffer.from(given)
  if (actual.length !== expected.length || !timingSafeEqual(actual, expected)) return null
  return target.expires * 1000 > nowMs ? target : null
}
