import { decodeProtectedHeader } from 'jose'
import { LRUCache } from 'lru-cache'
import type { TokenProvider } from '../../config/auth.ts'
import type { Identity } from '../../domain/core/index.ts'
import { unauthenticated, type Verified } from './claims.ts'
import { verifyHs256 } from './hs256.ts'
import { PROVIDER_ALGORITHMS, providerVerifier } from './provider.ts'

/** A verified token's identity and when it stops being accepted (ms since the epoch; Infinity without exp). */
type Accepted = Identity & { expiresAt: number }

/** `Authorization: Bearer <JWT>` (HTTP header, or graphql-ws connectionParams.authorization) to an identity; absent → null. */
export type Authenticator = (authorization: string | null | undefined) => Promise<Accepted | null>

/**
 * HS256 tokens with `secret` (null: off) and the provider's tokens (null: none), told apart by the
 * header's `alg` before any key is chosen: an HS256 token never meets the provider's public key
 * (algorithm confusion), and `none` or any other algorithm is refused outright.
 *
 * A client sends the same token with every request, so verified tokens are remembered: a token
 * seen before costs a lookup instead of a signature check; the entry serves until the token's exp,
 * after which the token is verified, and refused, again. The exp is compared here rather than given
 * to lru-cache as a ttl: its ttl reads the clock through a timer it re-arms, which cost more than the lookup.
 */
export function createAuthenticator(opts: { secret: string | null; provider?: TokenProvider | null }): Authenticator {
  const verified = new LRUCache<string, Accepted>({ max: 10_000 })
  const { secret } = opts
  const provider = opts.provider ? providerVerifier(opts.provider) : null
  return async (authorization) => {
    if (!authorization) return null
    const match = /^Bearer\s+(\S+)$/i.exec(authorization.trim())
    if (!match) throw unauthenticated('Authorization must be "Bearer <token>"')
    const token = match[1]!
    const known = verified.get(token)
    if (known && known.expiresAt > Date.now()) return known
    const fresh = await verify(token)
    const accepted = { ...fresh.identity, expiresAt: fresh.expiresAt }
    if (fresh.expiresAt > Date.now()) verified.set(token, accepted)
    return accepted
  }

  function verify(token: string): Promise<Verified> {
    let alg: unknown
    try {
      alg = decodeProtectedHeader(token).alg
    } catch {
      throw unauthenticated(secret ? 'invalid or expired token' : 'malformed token')
    }
    if (alg === 'HS256' && secret) return verifyHs256(secret, token)
    if (PROVIDER_ALGORITHMS.includes(alg as string) && provider) return provider(token)
    // Parley's own tokens keep their one answer (decision 0003) when only they are accepted.
    throw unauthenticated(provider ? 'signing algorithm not accepted' : 'invalid or expired token')
  }
}
