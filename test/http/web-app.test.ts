import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { print } from 'graphql'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AUTH_SECRET, uniqueHandle } from '../support/harness.ts'
import { WhoAmI } from '../support/operations.ts'
import { startServer, type TestServer } from '../support/server.ts'

/** A stand-in for Vite's output: index.html and one fingerprinted asset. */
let dir: string
let dev: TestServer
let production: TestServer
const at = (server: TestServer, pathname: string) => new URL(pathname, server.url).href
const signIn = (server: TestServer, body: string) =>
  fetch(at(server, '/dev/token'), { method: 'POST', headers: { 'content-type': 'application/json' }, body })

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'parley-web-'))
  mkdirSync(path.join(dir, 'assets'))
  writeFileSync(path.join(dir, 'index.html'), '<!doctype html><script src="/assets/index-abc123.js"></script>')
  writeFileSync(path.join(dir, 'assets', 'index-abc123.js'), 'console.log(1)')
  dev = await startServer(undefined, { webApp: { dir, devTokenSecret: AUTH_SECRET } })
  production = await startServer(undefined, { production: true, webApp: { dir, devTokenSecret: null } })
})

afterAll(async () => {
  await Promise.all([dev?.close(), production?.close()])
  if (dir) rmSync(dir, { recursive: true, force: true })
})

describe('the workbench at /', () => {
  it('serves index.html revalidated on each load and fingerprinted assets cached for good', async () => {
    const page = await fetch(at(dev, '/'))
    expect(page.status).toBe(200)
    expect(page.headers.get('cache-control')).toBe('no-cache')
    expect(await page.text()).toContain('/assets/index-abc123.js')
    const asset = await fetch(at(dev, '/assets/index-abc123.js'))
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable')
    expect(asset.headers.get('content-type')).toMatch(/javascript/)
    expect((await fetch(at(dev, '/assets/missing.js'))).status).toBe(404)
    // Outside / and /assets/ nothing is taken from the API: /graphql still answers GraphQL.
    expect((await fetch(at(dev, '/assets/../../package.json'))).status).not.toBe(200)
    const api = await fetch(at(dev, '/graphql'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ __typename }' }),
    })
    expect(await api.json()).toEqual({ data: { __typename: 'Query' } })
  })

  it('signs in by handle in development: the token works on the API', async () => {
    const handle = uniqueHandle('web')
    const response = await signIn(dev, JSON.stringify({ handle }))
    expect(response.status).toBe(200)
    const { token } = (await response.json()) as { token: string }
    const me = await fetch(dev.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query: print(WhoAmI) }),
    })
    expect(((await me.json()) as { data: { viewer: { user: { id: string } } } }).data.viewer.user.id).toBeTruthy()
  })

  it('refuses a bad handle, a body that is not JSON, and a GET', async () => {
    expect((await signIn(dev, JSON.stringify({ handle: 'a b' }))).status).toBe(400)
    expect((await signIn(dev, 'handle=alice')).status).toBe(400)
    expect((await signIn(dev, JSON.stringify({ handle: 'x'.repeat(2000) }))).status).toBe(413)
    expect((await fetch(at(dev, '/dev/token'))).status).toBe(405)
  })

  it('has no sign-in in production, while the app is served', async () => {
    expect((await fetch(at(production, '/'))).status).toBe(200)
    const response = await signIn(production, JSON.stringify({ handle: 'alice' }))
    expect(response.status).toBe(404)
    expect(await response.text()).not.toContain('token')
  })
})
