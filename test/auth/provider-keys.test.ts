import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import WebSocket from 'ws'
import { loadConfig } from '../../src/config/env.ts'
import { AUTH_SECRET, testApp, uniqueHandle } from '../support/harness.ts'
import { epoch, identityProvider, signingKey, type SigningKey } from '../support/identityProvider.ts'
import { InboxEvents } from '../support/live.ts'
import {
  startServer,
  subscribeSse,
  subscribeWs,
  waitForSubscriptions,
  wsClient,
  type TestServer,
} from '../support/server.ts'

type Answer = {
  data?: { viewer: { user: { id: string; handle: string } } }
  errors?: { message: string; extensions?: { code?: string } }[]
}

async function whoIs(server: TestServer, token: string): Promise<Answer> {
  const response = await fetch(server.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query: '{ viewer { user { id handle } } }' }),
  })
  return (await response.json()) as Answer
}

const refusal = (answer: Answer) => answer.errors?.map((e) => [e.extensions?.code, e.message])

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe('key rotation without a restart', () => {
  let idp: Awaited<ReturnType<typeof identityProvider>>
  let server: TestServer
  let before: SigningKey, after: SigningKey
  const COOLDOWN_S = 1

  beforeAll(async () => {
    ;[before, after] = await Promise.all([signingKey('RS256'), signingKey('RS256')])
    idp = await identityProvider([before])
    const config = loadConfig({ AUTH_JWKS_URL: idp.jwksUrl, AUTH_CLOCK_TOLERANCE_S: '0' })
    // A short cooldown, so the test need not wait jose's 30 s before an unknown kid may fetch again.
    server = await startServer(testApp().app, {
      authSecret: AUTH_SECRET,
      provider: { ...config.AUTH_PROVIDER!, jwksCooldownS: COOLDOWN_S },
    })
  })
  afterAll(async () => {
    await server?.close()
    await idp?.close()
  })

  it('accepts a token signed with a newly published key (new kid) once the cooldown has passed; the retired key is refused', async () => {
    const handle = uniqueHandle('rotate')
    expect(refusal(await whoIs(server, await idp.mint(before, { sub: handle })))).toBeUndefined()
    expect(idp.state.jwksRequests).toBe(1)
    idp.state.published = [after]
    await sleep(COOLDOWN_S * 1000 + 100)
    const rotated = await whoIs(server, await idp.mint(after, { sub: handle }))
    expect(rotated.data?.viewer.user.handle).toBe(handle)
    expect(idp.state.jwksRequests).toBe(2)
    expect(refusal(await whoIs(server, await idp.mint(before, { sub: handle })))).toEqual([
      ['UNAUTHENTICATED', 'unknown signing key'],
    ])
  })

  it('live connections with a provider token behave as with an HS256 one: refused at connect once expired, closed at exp, over SSE too', async () => {
    const handle = uniqueHandle('live')
    const expired = await idp.mint(after, { sub: handle, exp: epoch(-1) })
    const socket = new WebSocket(server.wsUrl, 'graphql-transport-ws')
    await new Promise((resolve) => socket.once('open', resolve))
    const closed = new Promise<number>((resolve) => socket.once('close', (code) => resolve(code)))
    socket.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${expired}` } }))
    expect(await closed).toBe(4403)

    const sse = subscribeSse(server.url, expired, InboxEvents)
    await sse.ended()
    expect(sse.errors.map((e) => [e.extensions?.code, e.message])).toEqual([['UNAUTHENTICATED', 'token expired']])

    const exp = epoch(3)
    const shortLived = await idp.mint(after, { sub: handle, exp })
    const user = (await whoIs(server, shortLived)).data!.viewer.user
    const closes: number[] = []
    const client = wsClient(server.wsUrl, shortLived, {
      on: { closed: (event) => void closes.push((event as { code: number }).code) },
    })
    try {
      // An open socket closes at the token's exp (4403), as with an HS256 token.
      const first = subscribeWs(client, InboxEvents)
      await waitForSubscriptions(server.app, user, 1)
      await first.ended()
      expect(Date.now()).toBeGreaterThanOrEqual(exp * 1000 - 1000)
      // The subscription may end (complete) a moment before the socket's close reaches the client.
      await vi.waitFor(() => expect(closes).toEqual([4403]), { timeout: 5_000, interval: 20 })
    } finally {
      await client.dispose()
    }
  })
})

describe('a burst of unknown kids', () => {
  it('1,000 requests with random kids fetch the key set a bounded number of times (once per cooldown)', async () => {
    const [published, unpublished] = await Promise.all([signingKey('ES256'), signingKey('ES256')])
    const idp = await identityProvider([published])
    // jose's default cooldown (30 s), from a cold start: no key set loaded yet.
    const config = loadConfig({ AUTH_JWKS_URL: idp.jwksUrl })
    const server = await startServer(testApp().app, { authSecret: AUTH_SECRET, provider: config.AUTH_PROVIDER })
    try {
      const tokens = await Promise.all(
        Array.from({ length: 1000 }, () =>
          idp.mint(unpublished, { sub: uniqueHandle('burst') }, { kid: randomUUID() }),
        ),
      )
      const answers: Answer[] = []
      for (let i = 0; i < tokens.length; i += 100)
        answers.push(...(await Promise.all(tokens.slice(i, i + 100).map((token) => whoIs(server, token)))))
      expect(new Set(answers.map((a) => JSON.stringify(refusal(a))))).toEqual(
        new Set([JSON.stringify([['UNAUTHENTICATED', 'unknown signing key']])]),
      )
      // One fetch loads the set; every later unknown kid falls within the cooldown that fetch started.
      // A burst that outlasted a cooldown could fetch once more per 30 s.
      expect(idp.state.jwksRequests).toBeGreaterThanOrEqual(1)
      expect(idp.state.jwksRequests).toBeLessThanOrEqual(2)
      const fetched = idp.state.jwksRequests
      // The published key still works, from the key set already held.
      const handle = uniqueHandle('after-burst')
      expect((await whoIs(server, await idp.mint(published, { sub: handle }))).data?.viewer.user.handle).toBe(handle)
      expect(idp.state.jwksRequests).toBe(fetched)
    } finally {
      await server.close()
      await idp.close()
    }
  })
})

describe('a provider that cannot be used', () => {
  it('answers UNAVAILABLE with retryAfterMs, and tries the provider again only after a pause', async () => {
    const key = await signingKey('ES256')
    const idp = await identityProvider([key])
    // A key set URL that answers 404, and one whose answer is larger than any key set.
    const missing = loadConfig({ AUTH_JWKS_URL: `${idp.issuer}/missing` })
    const oversized = loadConfig({ AUTH_JWKS_URL: idp.jwksUrl })
    const servers = await Promise.all(
      [missing, oversized].map((config) =>
        startServer(testApp().app, { authSecret: AUTH_SECRET, provider: config.AUTH_PROVIDER }),
      ),
    )
    try {
      const unavailable = ['UNAVAILABLE', "the identity provider's signing keys cannot be fetched; retry shortly"]
      for (let i = 0; i < 3; i++)
        expect(refusal(await whoIs(servers[0]!, await idp.mint(key, { sub: uniqueHandle() })))).toEqual([unavailable])
      expect(idp.state.otherRequests).toBe(1)
      idp.state.padding = 300_000
      expect(refusal(await whoIs(servers[1]!, await idp.mint(key, { sub: uniqueHandle() })))).toEqual([unavailable])
      expect(idp.state.jwksRequests).toBe(1)
    } finally {
      await Promise.all(servers.map((s) => s.close()))
      await idp.close()
    }
  })
})
