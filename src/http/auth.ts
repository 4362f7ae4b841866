import { createSecretKey, randomBytes, type KeyObject } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { SignJWT, jwtVerify } from 'jose'
import { LRUCache } from 'lru-cache'
import { DomainError } from '../domain/core/index.ts'
import { isStorable } from './plugins/useInputHygiene.ts'
import type { Identity } from '../domain/core/index.ts'

const ALG = 'HS256'

/**
 * Per secret: its KeyObject (importing the raw secret on every verify costs more than the HMAC
 * itself) and the tokens it has verified. A client sends the same token with every request, so a
 * token seen before costs a lookup instead of an asynchronous WebCrypto HMAC; the entry serves until
 * the token's exp, after which the token is verified, and refused, again. The exp is compared here
 * rather than given to lru-cache as a ttl: its ttl reads the clock through a timer it re-arms,
 * which cost more than the lookup.
 */
type Verifier = { key: KeyObject; verified: LRUCache<string, { identity: Identity; expiresAt: number }> }
const verifiers = new Map<string, Verifier>()
const verifierFor = (secret: string) => {
  let v = verifiers.get(secret)
  if (!v)
    verifiers.set(
      secret,
      (v = { key: createSecretKey(Buffer.from(secret, 'utf8')), verified: new LRUCache({ max: 10_000 }) }),
    )
  return v
}

export async function signToken(
  secret: string,
  handle: string,
  opts: { operator?: boolean; name?: string; expiresIn?: string } = {},
): Promise<string> {
  return new SignJWT({ ...(opts.operator ? { role: 'operator' } : {}), ...(opts.name ? { name: opts.name } : {}) })
    .setProtectedHeader({ alg: ALG })
    .setSubject(handle)
    .setIssuedAt()
    .setExpirationTime(opts.expiresIn ?? '30d')
    .sign(verifierFor(secret).key)
}

const unauthenticated = (message: string) => new DomainError('UNAUTHENTICATED', message, { http: { status: 401 } })

/** `Authorization: Bearer <JWT>` (HTTP header, or graphql-ws connectionParams.authorization). Absent → null. */
export async function authenticate(secret: string, authorization: string | null | undefined): Promise<Identity | null> {
  if (!authorization) return null
  const match = /^Bearer\s+(\S+)$/i.exec(authorization.trim())
  if (!match) throw unauthenticated('Authorization must be "Bearer <token>"')
  const token = match[1]!
  const { key, verified } = verifierFor(secret)
  const known = verified.get(token)
  if (known && known.expiresAt > Date.now()) return known.identity
  try {
    const { payload } = await jwtVerify(token, key, { algorithms: [ALG] })
    // The handle and the name are stored on the user's first request.
    if (typeof payload.sub !== 'string' || !payload.sub || payload.sub.length > 128 || !isStorable(payload.sub))
      throw new Error('sub')
    if (typeof payload.name === 'string' && !isStorable(payload.name)) throw new Error('name')
    // Cut at 128 UTF-16 units, never inside a surrogate pair.
    const name = typeof payload.name === 'string' ? payload.name.slice(0, 128).replace(/[\ud800-\udbff]$/, '') : null
    const identity = { handle: payload.sub, isOperator: payload.role === 'operator', name }
    const expiresAt = payload.exp === undefined ? Infinity : payload.exp * 1000
    if (expiresAt > Date.now()) verified.set(token, { identity, expiresAt })
    return identity
  } catch {
    throw unauthenticated('invalid or expired token')
  }
}

/**
 * AUTH_SECRET, or in development a secret created once in the data folder (so tokens survive
 * restarts). Production without AUTH_SECRET is refused.
 */
export function resolveAuthSecret(
  config: { AUTH_SECRET?: string | undefined; NODE_ENV: string; DATA_DIR: string },
  log: (m: string) => void = console.log,
): string {
  if (config.AUTH_SECRET) return config.AUTH_SECRET
  if (config.NODE_ENV === 'production') throw new Error('AUTH_SECRET is required when NODE_ENV=production')
  const file = path.resolve(config.DATA_DIR, 'auth-secret')
  if (existsSync(file)) return readFileSync(file, 'utf8').trim()
  mkdirSync(path.dirname(file), { recursive: true })
  const secret = randomBytes(32).toString('base64url')
  writeFileSync(file, secret + '\n', { mode: 0o600 })
  log(`No AUTH_SECRET set: created a development secret in ${file}`)
  return secret
}
