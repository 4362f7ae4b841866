import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config/env.ts'
import { signToken } from '../../src/http/auth/hs256.ts'
import { AUTH_SECRET, testApp, uniqueHandle } from '../support/harness.ts'
import {
  epoch,
  hs256WithPublicKey,
  identityProvider,
  signingKey,
  unsignedToken,
  type SigningKey,
} from '../support/identityProvider.ts'
import { spawnInstance, startServer, type TestServer } from '../support/server.ts'

/** A Keycloak-style mapping: handle from preferred_username, operators by realm role, service accounts as agents. */
const KEYCLOAK_STYLE = {
  AUTH_AUDIENCE: 'parley-api',
  AUTH_HANDLE_CLAIM: 'preferred_username',
  AUTH_OPERATOR_CLAIM: 'realm_access.roles',
  AUTH_OPERATOR_VALUE: 'parley-operator',
  AUTH_AGENT_CLAIM: 'client_id',
}

const ME = '{ viewer { isOperator user { handle displayName kind } } }'
type Me = { viewer: { isOperator: boolean; user: { handle: string; displayName: string; kind: string } } }
type Answer = { status: number; data?: Me; errors?: { message: string; extensions?: { code?: string } }[] }

/** Asks who the token's user is, over real HTTP. */
async function whoIs(server: TestServer, token: string): Promise<Answer> {
  const response = await fetch(server.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query: ME }),
  })
  return { status: response.status, ...((await response.json()) as Omit<Answer, 'status'>) }
}

/** The refusal: UNAUTHENTICATED with `reason`, and nothing of the token in the answer. */
async function expectRefused(server: TestServer, token: string, reason: string) {
  const answer = await whoIs(server, token)
  expect(answer.errors?.map((e) => [e.extensions?.code, e.message])).toEqual([['UNAUTHENTICATED', reason]])
  expect(answer.status).toBe(401)
  for (const part of token.split('.').filter((p) => p.length > 8)) expect(JSON.stringify(answer)).not.toContain(part)
}

let rsa: SigningKey, ec: SigningKey, ed: SigningKey
let provider: Awaited<ReturnType<typeof identityProvider>>
let server: TestServer

beforeAll(async () => {
  ;[rsa, ec, ed] = await Promise.all([signingKey('RS256'), signingKey('ES256'), signingKey('EdDSA')])
  provider = await identityProvider([rsa, ec, ed])
  // Only the issuer: the key set's URL comes from the discovery document.
  const config = loadConfig({ AUTH_ISSUER: provider.issuer, ...KEYCLOAK_STYLE })
  server = await startServer(testApp().app, { authSecret: AUTH_SECRET, provider: config.AUTH_PROVIDER })
})
afterAll(async () => {
  await server?.close()
  await provider?.close()
})

describe("tokens from an identity provider (AUTH_ISSUER with discovery, the provider's JWKS)", () => {
  it('accepts RS256, ES256 and EdDSA tokens, creating the user on first use; HS256 tokens keep working beside them', async () => {
    for (const key of [rsa, ec, ed]) {
      const handle = uniqueHandle(key.alg)
      const answer = await whoIs(server, await provider.mint(key, { sub: 'ignored', preferred_username: handle }))
      expect(answer.errors).toBeUndefined()
      expect(answer.data!.viewer.user).toEqual({ handle, displayName: handle, kind: 'HUMAN' })
    }
    expect(provider.state.discoveryRequests).toBe(1)
    const own = uniqueHandle('hs')
    const answer = await whoIs(server, await signToken(AUTH_SECRET, own, { name: 'Own Token' }))
    expect(answer.data!.viewer.user).toEqual({ handle: own, displayName: 'Own Token', kind: 'HUMAN' })
  })

  it('refuses wrong issuer, wrong audience, expiry beyond the tolerance, early nbf, an unknown kid, alg none and algorithm confusion', async () => {
    const claims = { preferred_username: uniqueHandle('refused') }
    await expectRefused(
      server,
      await provider.mint(rsa, { ...claims, iss: 'https://elsewhere.example' }),
      'wrong issuer',
    )
    await expectRefused(server, await provider.mint(rsa, { ...claims, aud: 'another-api' }), 'wrong audience')
    await expectRefused(server, await provider.mint(ec, { ...claims, exp: epoch(-31) }), 'token expired')
    await expectRefused(server, await provider.mint(ec, { ...claims, nbf: epoch(60) }), 'token not yet valid')
    const unpublished = await signingKey('RS256')
    await expectRefused(server, await provider.mint(unpublished, claims), 'unknown signing key')
    // The right kid with another key's signature.
    await expectRefused(server, await provider.mint(unpublished, claims, { kid: rsa.kid }), 'invalid signature')
    await expectRefused(
      server,
      unsignedToken({ ...claims, iss: provider.issuer, aud: 'parley-api', exp: epoch(3600) }),
      'signing algorithm not accepted',
    )
    // Verified, if at all, with AUTH_SECRET: the provider's public key is never an HMAC secret.
    await expectRefused(
      server,
      await hs256WithPublicKey(rsa, { ...claims, sub: claims.preferred_username, iss: provider.issuer }),
      'invalid or expired token',
    )
    await expectRefused(
      server,
      await provider.mint(ed, { sub: 'no preferred_username' }),
      "the token's preferred_username claim is not a usable handle",
    )
  })

  it('allows a clock skew of AUTH_CLOCK_TOLERANCE_S (30 s by default) on exp and nbf', async () => {
    const handle = uniqueHandle('skew')
    const lateButTolerated = await provider.mint(rsa, { preferred_username: handle, exp: epoch(-10) })
    expect((await whoIs(server, lateButTolerated)).data!.viewer.user.handle).toBe(handle)
    const earlyButTolerated = await provider.mint(ec, { preferred_username: handle, nbf: epoch(10) })
    expect((await whoIs(server, earlyButTolerated)).data!.viewer.user.handle).toBe(handle)
  })

  it('maps the claims: handle, name, operator (an array claim holding the value) and agent (a claim present)', async () => {
    const operatorHandle = uniqueHandle('op')
    const operator = await whoIs(
      server,
      await provider.mint(rsa, {
        preferred_username: operatorHandle,
        name: 'Olga Operator',
        realm_access: { roles: ['offline_access', 'parley-operator'] },
      }),
    )
    expect(operator.data!.viewer).toEqual({
      isOperator: true,
      user: { handle: operatorHandle, displayName: 'Olga Operator', kind: 'HUMAN' },
    })
    const userHandle = uniqueHandle('user')
    const user = await whoIs(
      server,
      await provider.mint(ec, {
        preferred_username: userHandle,
        realm_access: { roles: ['parley-user'] },
        role: 'operator',
      }),
    )
    expect(user.data!.viewer.isOperator).toBe(false)
    // A client-credentials token of a Keycloak service account carries client_id.
    const agentHandle = uniqueHandle('service-account-bot')
    const agent = await whoIs(
      server,
      await provider.mint(ed, { preferred_username: agentHandle, client_id: 'helper-bot', name: 'Helper Bot' }),
    )
    expect(agent.data!.viewer).toEqual({
      isOperator: false,
      user: { handle: agentHandle, displayName: 'Helper Bot', kind: 'AGENT' },
    })
  })
})

describe('the default mapping (sub, name, role: "operator") and AUTH_AGENT_VALUE', () => {
  it('reads the same claims as an HS256 token, and an agent by a claim holding a value', async () => {
    const key = await signingKey('ES256')
    const idp = await identityProvider([key])
    const config = loadConfig({ AUTH_JWKS_URL: idp.jwksUrl, AUTH_AGENT_CLAIM: 'kind', AUTH_AGENT_VALUE: 'agent' })
    // Without AUTH_SECRET: only the provider's tokens.
    const only = await startServer(testApp().app, { authSecret: null, provider: config.AUTH_PROVIDER })
    try {
      const handle = uniqueHandle('default')
      const operator = await whoIs(only, await idp.mint(key, { sub: handle, name: 'Default Map', role: 'operator' }))
      expect(operator.data!.viewer).toEqual({
        isOperator: true,
        user: { handle, displayName: 'Default Map', kind: 'HUMAN' },
      })
      const agentHandle = uniqueHandle('agent')
      const agent = await whoIs(only, await idp.mint(key, { sub: agentHandle, kind: 'agent' }))
      expect(agent.data!.viewer.user.kind).toBe('AGENT')
      await expectRefused(only, await signToken(AUTH_SECRET, uniqueHandle()), 'signing algorithm not accepted')
    } finally {
      await only.close()
      await idp.close()
    }
  })
})

describe('npm start with only an identity provider, in production', () => {
  it('accepts its tokens, refuses HS256 ones, and allows the CORS_ORIGINS origin', async () => {
    const key = await signingKey('RS256')
    const idp = await identityProvider([key])
    const instance = await spawnInstance({
      NODE_ENV: 'production',
      AUTH_SECRET: undefined,
      // Without AUTH_SECRET, webhook secrets need a key of their own.
      WEBHOOK_SECRET_KEY: 'a webhook sealing key for this test only',
      AUTH_ISSUER: idp.issuer,
      AUTH_AUDIENCE: 'parley-api',
      CORS_ORIGINS: 'https://chat.example.com',
    })
    try {
      const target = { url: instance.url } as TestServer
      const handle = uniqueHandle('spawned')
      expect((await whoIs(target, await idp.mint(key, { sub: handle }))).data!.viewer.user.handle).toBe(handle)
      await expectRefused(target, await signToken(AUTH_SECRET, handle), 'signing algorithm not accepted')
      await expectRefused(target, await idp.mint(key, { sub: handle, aud: 'another-api' }), 'wrong audience')
      const cors = await fetch(instance.url, {
        method: 'POST',
        headers: { origin: 'https://chat.example.com', 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ __typename }' }),
      })
      expect(cors.headers.get('access-control-allow-origin')).toBe('https://chat.example.com')
      expect(cors.headers.get('access-control-allow-credentials')).toBeNull()
    } finally {
      instance.child.kill('SIGTERM')
      await instance.exited
      await idp.close()
    }
  })
})
