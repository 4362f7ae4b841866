import { createSecretKey, randomBytes, type KeyObject } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { SignJWT, jwtVerify } from 'jose'
import { StartupError } from '../../config/env.ts'
import { checkedHandle, checkedName, unauthenticated, type Verified } from './claims.ts'

/**
 * Parley's own tokens: HS256 with AUTH_SECRET, claims `sub` (handle), `name`, `role: "operator"`,
 * as `npm run token` and GraphiQL's development token mint them (decision 0003).
 */
const ALG = 'HS256'

// Importing the raw secret on every verify costs more than the HMAC itself.
const keys = new Map<string, KeyObject>()
const keyFor = (secret: string) => {
  let key = keys.get(secret)
  if (!key) keys.set(secret, (key = createSecretKey(Buffer.from(secret, 'utf8'))))
  return key
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
    .sign(keyFor(secret))
}

/** Verifies an HS256 token with the secret: only HS256, so no other key or algorithm can stand in for it. */
export async function verifyHs256(secret: string, token: string): Promise<Verified> {
  try {
    const { payload } = await jwtVerify(token, keyFor(secret), { algorithms: [ALG] })
    const identity = {
      handle: checkedHandle(payload.sub, 'sub'),
      isOperator: payload.role === 'operator',
      name: checkedName(payload.name, 'name'),
      kind: 'HUMAN' as const,
    }
    return { identity, expiresAt: payload.exp === undefined ? Infinity : payload.exp * 1000 }
  } catch {
    throw unauthenticated('invalid or expired token')
  }
}

/**
 * AUTH_SECRET, or in development a secret created once in the data folder (so tokens survive
 * restarts). In production without AUTH_SECRET, HS256 tokens are off when an identity provider is
 * configured (null), and start-up is refused when none is.
 */
export function resolveAuthSecret(
  config: { AUTH_SECRET?: string | undefined; NODE_ENV: string; DATA_DIR: string; AUTH_PROVIDER: object | null },
  log: (m: string) => void = console.log,
): string | null {
  if (config.AUTH_SECRET) return config.AUTH_SECRET
  if (config.NODE_ENV === 'production') {
    if (config.AUTH_PROVIDER) return null
    throw new StartupError(
      'AUTH_SECRET is required when NODE_ENV=production, unless AUTH_JWKS_URL or AUTH_ISSUER names an identity provider',
    )
  }
  const file = path.resolve(config.DATA_DIR, 'auth-secret')
  if (existsSync(file)) return readFileSync(file, 'utf8').trim()
  mkdirSync(path.dirname(file), { recursive: true })
  const secret = randomBytes(32).toString('base64url')
  writeFileSync(file, secret + '\n', { mode: 0o600 })
  log(`No AUTH_SECRET set: created a development secret in ${file}`)
  return secret
}
