import { createRemoteJWKSet, customFetch, errors, jwtVerify, type JWTVerifyGetKey } from 'jose'
import { isTrustedKeyUrl, type TokenProvider } from '../../config/auth.ts'
import { RETRY_AFTER_MS } from '../../db/availability.ts'
import { DomainError, retryLater } from '../../domain/core/index.ts'
import { mappedIdentity, unauthenticated, type Verified } from './claims.ts'

/** What a provider may sign with; HS256 and `none` never reach its keys. */
export const PROVIDER_ALGORITHMS = ['RS256', 'ES256', 'EdDSA']

const FETCH_TIMEOUT_MS = 5_000
/** A key set or discovery document is a few kilobytes; more is a misconfigured or hostile endpoint. */
const MAX_DOCUMENT_BYTES = 256 * 1024
/** After a failed fetch, verifications that need the provider wait this long before trying it again. */
const FAILURE_BACKOFF_MS = 5_000

const providerUnavailable = () =>
  retryLater('UNAVAILABLE', "the identity provider's signing keys cannot be fetched; retry shortly", RETRY_AFTER_MS)

/**
 * fetch for the provider's documents: no redirects (jose's choice too), a timeout, a size limit, and
 * after a failure a pause, so that tokens arriving while the provider is down or erroring do not
 * become a request each (jose's cooldown only follows a successful fetch).
 */
function providerFetch() {
  let failedAt = -Infinity
  return async (url: string, init: RequestInit = {}): Promise<Response> => {
    if (Date.now() - failedAt < FAILURE_BACKOFF_MS) throw providerUnavailable()
    try {
      const response = await fetch(url, {
        ...init,
        redirect: 'manual',
        signal: init.signal ?? AbortSignal.timeout(FETCH_TIMEOUT_MS),
      })
      if (Number(response.headers.get('content-length') ?? 0) > MAX_DOCUMENT_BYTES) throw new Error('too large')
      const chunks: Uint8Array[] = []
      let size = 0
      // Node's web streams are async iterable; the DOM typings do not say so.
      for await (const chunk of (response.body ?? []) as unknown as AsyncIterable<Uint8Array>) {
        size += chunk.byteLength
        if (size > MAX_DOCUMENT_BYTES) throw new Error('too large')
        chunks.push(chunk)
      }
      if (response.status !== 200) throw new Error(`status ${response.status}`)
      return new Response(Buffer.concat(chunks), { status: 200, headers: response.headers })
    } catch (error) {
      failedAt = Date.now()
      throw error
    }
  }
}

/** The OpenID configuration's jwks_uri, from a document that names the same issuer (OpenID Connect Discovery 4.3). */
async function discoverJwksUrl(issuer: string, get: ReturnType<typeof providerFetch>): Promise<URL> {
  const response = await get(`${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`, {
    headers: { accept: 'application/json' },
  })
  const document = (await response.json()) as { issuer?: unknown; jwks_uri?: unknown }
  if (document.issuer !== issuer) throw new Error('the discovery document names another issuer')
  if (typeof document.jwks_uri !== 'string' || !URL.canParse(document.jwks_uri)) throw new Error('no jwks_uri')
  const url = new URL(document.jwks_uri)
  if (!isTrustedKeyUrl(url)) throw new Error('jwks_uri is not https')
  return url
}

/** jose's reasons, said safely: which check refused, never the token or the key. */
function refusal(error: unknown): DomainError {
  if (error instanceof DomainError) return error
  if (error instanceof errors.JWTExpired) return unauthenticated('token expired')
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === 'aud') return unauthenticated('wrong audience')
    if (error.claim === 'iss') return unauthenticated('wrong issuer')
    if (error.claim === 'nbf') return unauthenticated('token not yet valid')
    return unauthenticated(`invalid ${error.claim} claim`)
  }
  if (error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JWKSMultipleMatchingKeys)
    return unauthenticated('unknown signing key')
  if (error instanceof errors.JWSSignatureVerificationFailed) return unauthenticated('invalid signature')
  if (error instanceof errors.JOSEAlgNotAllowed) return unauthenticated('signing algorithm not accepted')
  if (
    error instanceof errors.JWTInvalid ||
    error instanceof errors.JWSInvalid ||
    error instanceof errors.JOSENotSupported
  )
    return unauthenticated('malformed token')
  // Anything else failed on the way to the keys: a timeout, a refused connection, a bad document.
  return providerUnavailable()
}

/**
 * Verifies tokens against the provider's published keys: jose's remote key set, fetched on first
 * use (after discovery when only the issuer is given), refreshed after jwksMaxAgeS and on an unknown
 * `kid` at most once per jwksCooldownS, so rotation needs no restart and a flood of made-up kids
 * costs the provider one request per cooldown.
 */
export function providerVerifier(provider: TokenProvider): (token: string) => Promise<Verified> {
  const get = providerFetch()
  let keys: Promise<JWTVerifyGetKey> | undefined
  const keySet = () =>
    (keys ??= (provider.jwksUrl ? Promise.resolve(provider.jwksUrl) : discoverJwksUrl(provider.issuer!, get)).then(
      (url) =>
        createRemoteJWKSet(url, {
          cooldownDuration: provider.jwksCooldownS * 1000,
          cacheMaxAge: provider.jwksMaxAgeS * 1000,
          timeoutDuration: FETCH_TIMEOUT_MS,
          [customFetch]: get,
        }),
      (error: unknown) => {
        // Discovery is tried again once the backoff has passed.
        keys = undefined
        throw error
      },
    ))
  return async (token) => {
    try {
      const { payload } = await jwtVerify(token, await keySet(), {
        algorithms: PROVIDER_ALGORITHMS,
        issuer: provider.issuer ?? undefined,
        audience: provider.audience ?? undefined,
        clockTolerance: provider.clockToleranceS,
      })
      return {
        identity: mappedIdentity(payload, provider.claims),
        expiresAt: payload.exp === undefined ? Infinity : payload.exp * 1000,
      }
    } catch (error) {
      throw refusal(error)
    }
  }
}
