import { getIntrospectionQuery, type IntrospectionQuery } from 'graphql'
import { renderGraphiQL } from 'graphql-yoga'
import { decodeJwt } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEV_USER } from '../../src/http/graphiql.ts'
import { createParleyServer } from '../../src/http/server.ts'
import { AUTH_SECRET, testApp } from '../support/harness.ts'
import { crawl, referencesIn } from '../support/references.ts'
import { startServer, type TestServer } from '../support/server.ts'

/** The options the page hands to GraphiQL (its JSON data block). */
async function pageOptions(url: string): Promise<{ headers?: string; defaultHeaders?: string }> {
  const html = await (await fetch(url, { headers: { accept: 'text/html' } })).text()
  const json = /<script id="graphiql-options" type="application\/json">(.*?)<\/script>/s.exec(html)?.[1]
  expect(json, 'the page carries its options').toBeDefined()
  return (JSON.parse(json!) as { options: { headers?: string; defaultHeaders?: string } }).options
}

async function post<Data = unknown>(url: string, headers: Record<string, string>, query: string) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ query }),
  })
  return { status: response.status, body: (await response.json()) as { data?: Data; errors?: { message: string }[] } }
}

describe('GraphiQL served by Parley alone', () => {
  let dev: TestServer
  beforeAll(async () => {
    dev = await startServer()
  })
  afterAll(() => dev.close())

  it('loads its page, scripts, styles, workers and icon from this server and names no other host', async () => {
    const { fetched, foreign } = await crawl(dev.url)
    expect(foreign).toEqual([])
    expect(fetched.filter((f) => f.status !== 200)).toEqual([])
    const path = (u: string) => new URL(u).pathname
    expect(fetched.map((f) => path(f.url).replace(/\.[0-9a-f]{16}\./, '.')).sort()).toEqual([
      '/graphql',
      '/graphql/graphiql/editor.worker.js',
      '/graphql/graphiql/favicon.ico',
      '/graphql/graphiql/graphiql.css',
      '/graphql/graphiql/graphiql.js',
      '/graphql/graphiql/graphql.worker.js',
      '/graphql/graphiql/json.worker.js',
      '/graphql/graphiql/start.js',
    ])
    // Monaco starts its workers as module workers: the browser refuses them without a script type.
    for (const f of fetched.filter((f) => f.url.endsWith('.js'))) expect(f.contentType).toMatch(/^text\/javascript/)
  })

  it('answers 404 for a file it does not have', async () => {
    const response = await fetch(new URL('/graphql/graphiql/graphiql.0000000000000000.js', dev.url))
    expect(response.status).toBe(404)
  })

  it("finds the CDN loads of Yoga's default page and runtime loads in code (the check above can fail)", () => {
    const yogaDefault = referencesIn('html', renderGraphiQL({}))
    expect(yogaDefault.filter((u) => u.startsWith('https://unpkg.com/')).length).toBeGreaterThanOrEqual(2)
    const code =
      'fetch("https://cdn.test/a.json"); new Worker(`//cdn.test/w.js`); el.src = "https://cdn.test/s.js"; // see https://docs.test/'
    expect(referencesIn('js', code)).toEqual(['https://cdn.test/a.json', '//cdn.test/w.js', 'https://cdn.test/s.js'])
    expect(
      referencesIn('css', '@import "https://cdn.test/f.css"; a { background: url(https://cdn.test/i.png) }'),
    ).toEqual(['https://cdn.test/i.png', 'https://cdn.test/f.css'])
  })

  it(`in development opens with a working token for ${DEV_USER}: the schema fetch and a first query answer`, async () => {
    const { headers, defaultHeaders } = await pageOptions(dev.url)
    expect(defaultHeaders, 'a new tab gets the same header').toBe(headers)
    const prefilled = JSON.parse(headers!) as Record<string, string>
    const token = /^Bearer (\S+)$/.exec(prefilled.Authorization!)?.[1]
    const claims = decodeJwt(token!)
    expect(claims.sub).toBe(DEV_USER)
    expect(claims.exp! - claims.iat!).toBe(12 * 3600)

    const schema = await post<IntrospectionQuery>(dev.url, prefilled, getIntrospectionQuery())
    expect(schema.status).toBe(200)
    expect(schema.body.data?.__schema.queryType.name).toBe('Query')
    const first = await post(dev.url, prefilled, '{ viewer { user { handle } } }')
    expect(first.body).toEqual({ data: { viewer: { user: { handle: DEV_USER } } } })
  })

  it('in production prefills nothing, and the schema fetch without a header still answers', async () => {
    const production = createParleyServer({
      app: testApp().app,
      authSecret: AUTH_SECRET,
      maxBodyBytes: 100_000,
      production: true,
    })
    const url = await production.listen(0, '127.0.0.1')
    try {
      const options = await pageOptions(url)
      expect(options.headers).toBeUndefined()
      expect(options.defaultHeaders).toBeUndefined()
      expect(JSON.stringify(options)).not.toMatch(/Bearer/)
      const schema = await post<IntrospectionQuery>(url, {}, getIntrospectionQuery())
      expect(schema.status).toBe(200)
      expect(schema.body.data?.__schema.queryType.name).toBe('Query')
    } finally {
      await production.close()
    }
  })
})
