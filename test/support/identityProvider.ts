import { randomUUID } from 'node:crypto'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { exportJWK, exportSPKI, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose'

export type ProviderAlg = 'RS256' | 'ES256' | 'EdDSA'

/** A key pair the test signs with; `jwk` is what the key set publishes. */
export type SigningKey = { kid: string; alg: ProviderAlg; privateKey: CryptoKey; publicKey: CryptoKey; jwk: JWK }

export async function signingKey(alg: ProviderAlg): Promise<SigningKey> {
  const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true })
  const kid = `${alg}-${randomUUID()}`
  return { kid, alg, privateKey, publicKey, jwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } }
}

/**
 * An OpenID provider on loopback, as much of one as Parley reads: the discovery document at
 * `<issuer>/.well-known/openid-configuration` and the key set at `<issuer>/jwks`, serving whatever
 * `published` holds at the time (a rotation is an assignment) and counting the requests.
 */
export async function identityProvider(keys: SigningKey[]) {
  /** `padding`: characters of filler in the key set (a response too large); `otherRequests`: what was answered 404. */
  const state = { published: keys, jwksRequests: 0, discoveryRequests: 0, otherRequests: 0, padding: 0 }
  const server = createServer((req, res) => {
    const body =
      req.url === '/.well-known/openid-configuration'
        ? (state.discoveryRequests++, { issuer, jwks_uri: `${issuer}/jwks` })
        : req.url === '/jwks'
          ? (state.jwksRequests++, { keys: state.published.map((k) => k.jwk), padding: 'x'.repeat(state.padding) })
          : (state.otherRequests++, undefined)
    res.writeHead(body ? 200 : 404, { 'content-type': 'application/json' })
    res.end(JSON.stringify(body ?? {}))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    issuer,
    jwksUrl: `${issuer}/jwks`,
    state,
    /** A token as this provider would issue it: `claims` over iss, aud `parley-api`, a 1-hour exp and a unique jti. */
    mint(key: SigningKey, claims: JWTPayload, header: { kid?: string } = {}) {
      return new SignJWT({ iss: issuer, aud: 'parley-api', jti: randomUUID(), ...claims })
        .setProtectedHeader({ alg: key.alg, kid: header.kid ?? key.kid, typ: 'JWT' })
        .setIssuedAt()
        .setExpirationTime(claims.exp ?? '1h')
        .sign(key.privateKey)
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

/** Seconds since the epoch, `offset` seconds from now. */
export const epoch = (offset = 0) => Math.floor(Date.now() / 1000) + offset

/** An unsigned token (`alg: none`). */
export function unsignedToken(claims: JWTPayload): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url')
  return `${part({ alg: 'none', typ: 'JWT' })}.${part(claims)}.`
}

/** Algorithm confusion: an HS256 token whose HMAC key is the provider's public key as PEM, which anyone can read. */
export async function hs256WithPublicKey(key: SigningKey, claims: JWTPayload): Promise<string> {
  const pem = new TextEncoder().encode(await exportSPKI(key.publicKey))
  return new SignJWT(claims).setProtectedHeader({ alg: 'HS256', kid: key.kid }).setExpirationTime('1h').sign(pem)
}
