import { afterAll, describe, expect, it } from 'vitest'
import { loadConfig, StartupError } from '../../src/config/env.ts'
import { resolveAuthSecret } from '../../src/http/auth/hs256.ts'
import { AUTH_SECRET, testApp } from '../support/harness.ts'
import { startServer, type TestServer } from '../support/server.ts'

const started: TestServer[] = []
afterAll(() => Promise.all(started.map((s) => s.close())))

/** A server as `env` configures it (NODE_ENV, CORS_ORIGINS). */
async function serverFor(env: Record<string, string>) {
  const config = loadConfig(env)
  const server = await startServer(testApp().app, {
    authSecret: AUTH_SECRET,
    production: config.NODE_ENV === 'production',
    corsOrigins: config.CORS_ORIGINS,
  })
  started.push(server)
  return server
}

/** The CORS headers of a POST and of its preflight from `origin`. */
async function corsFrom(server: TestServer, origin: string) {
  const pick = (response: Response) => ({
    allowOrigin: response.headers.get('access-control-allow-origin'),
    allowCredentials: response.headers.get('access-control-allow-credentials'),
    vary: response.headers.get('vary'),
  })
  const post = await fetch(server.url, {
    method: 'POST',
    headers: { origin, 'content-type': 'application/json' },
    body: JSON.stringify({ query: '{ __typename }' }),
  })
  expect(post.status).toBe(200)
  const preflight = await fetch(server.url, {
    method: 'OPTIONS',
    headers: {
      origin,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'authorization, content-type',
    },
  })
  return {
    post: pick(post),
    preflight: { ...pick(preflight), allowHeaders: preflight.headers.get('access-control-allow-headers') },
  }
}

describe('CORS_ORIGINS', () => {
  it('production without CORS_ORIGINS: no cross-origin access', async () => {
    const server = await serverFor({ NODE_ENV: 'production' })
    const { post, preflight } = await corsFrom(server, 'https://chat.example.com')
    expect(post.allowOrigin).toBeNull()
    expect(preflight.allowOrigin).toBeNull()
  })

  it('production with CORS_ORIGINS: the listed origins, reflected with Vary: Origin; others get nothing; never credentials', async () => {
    const server = await serverFor({
      NODE_ENV: 'production',
      CORS_ORIGINS: 'https://chat.example.com, https://admin.example.com/',
    })
    for (const origin of ['https://chat.example.com', 'https://admin.example.com']) {
      const { post, preflight } = await corsFrom(server, origin)
      expect(post).toEqual({ allowOrigin: origin, allowCredentials: null, vary: expect.stringContaining('Origin') })
      expect(preflight).toMatchObject({
        allowOrigin: origin,
        allowCredentials: null,
        allowHeaders: 'authorization, content-type',
      })
    }
    const other = await corsFrom(server, 'https://evil.example.net')
    expect(other.post.allowOrigin).toBeNull()
    expect(other.preflight.allowOrigin).toBeNull()
  })

  it('development without CORS_ORIGINS: every origin reflected, as before, but without Access-Control-Allow-Credentials', async () => {
    const server = await serverFor({})
    const { post, preflight } = await corsFrom(server, 'http://localhost:5173')
    expect(post).toEqual({
      allowOrigin: 'http://localhost:5173',
      allowCredentials: null,
      vary: expect.stringContaining('Origin'),
    })
    expect(preflight).toMatchObject({ allowOrigin: 'http://localhost:5173', allowCredentials: null })
  })

  it('development with CORS_ORIGINS: only those', async () => {
    const server = await serverFor({ CORS_ORIGINS: 'http://localhost:5173' })
    expect((await corsFrom(server, 'http://localhost:5173')).post.allowOrigin).toBe('http://localhost:5173')
    expect((await corsFrom(server, 'http://localhost:3000')).post.allowOrigin).toBeNull()
  })
})

describe('the environment of tokens and origins', () => {
  it('names the variable at fault', () => {
    const problem = (env: Record<string, string>) => {
      try {
        loadConfig(env)
      } catch (error) {
        expect(error).toBeInstanceOf(StartupError)
        return (error as Error).message
      }
      throw new Error('accepted')
    }
    expect(problem({ CORS_ORIGINS: 'chat.example.com' })).toMatch(/CORS_ORIGINS=.* is not an origin/)
    expect(problem({ CORS_ORIGINS: 'https://chat.example.com/app' })).toMatch(/CORS_ORIGINS=.* is not an origin/)
    expect(problem({ AUTH_AUDIENCE: 'parley-api' })).toMatch(
      /AUTH_AUDIENCE="parley-api" needs AUTH_JWKS_URL or AUTH_ISSUER/,
    )
    expect(problem({ AUTH_JWKS_URL: 'http://idp.example.com/jwks' })).toMatch(/AUTH_JWKS_URL=.* must be https/)
    expect(problem({ AUTH_ISSUER: 'idp.example.com' })).toMatch(/AUTH_ISSUER=.* must be the provider's issuer URL/)
    expect(problem({ AUTH_JWKS_URL: 'https://idp.example.com/jwks', AUTH_AGENT_VALUE: 'agent' })).toMatch(
      /AUTH_AGENT_VALUE="agent" needs AUTH_AGENT_CLAIM/,
    )
    expect(problem({ AUTH_CLOCK_TOLERANCE_S: '-1' })).toMatch(
      /AUTH_CLOCK_TOLERANCE_S="-1" must be a whole number from 0 to 300/,
    )
  })

  it('production with only an identity provider turns HS256 tokens off; with neither, start-up is refused', () => {
    const production = { NODE_ENV: 'production', DATA_DIR: '/nonexistent' }
    expect(
      resolveAuthSecret(loadConfig({ ...production, AUTH_ISSUER: 'https://idp.example.com/realms/parley' })),
    ).toBeNull()
    expect(() => resolveAuthSecret(loadConfig(production))).toThrow(/AUTH_SECRET is required when NODE_ENV=production/)
  })
})
