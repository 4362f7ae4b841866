import { createHash } from 'node:crypto'
import type { GraphiQLOptions, Plugin } from 'graphql-yoga'
import { signToken } from './auth/hs256.ts'

/** The demo user whose token GraphiQL opens with in development (main.ts seeds it on a first embedded start). */
export const DEV_USER = 'alice'
/** How long the token put into a freshly loaded GraphiQL page is valid; a reload brings a new one. */
export const DEV_TOKEN_LIFETIME = '12h'

const DEFAULT_QUERY = `# Parley: press the run button (Ctrl-Enter). The docs and autocomplete come from this server.
{
  viewer {
    user { handle displayName }
  }
}
`

type Asset = { body: string | Uint8Array<ArrayBuffer>; contentType: string }
/** GraphiQL's files by fingerprinted name, and the URLs the page needs. */
type Bundle = {
  files: Map<string, Asset>
  css: string
  js: string
  start: string
  favicon: string
  workers: Record<string, string>
}

/**
 * Runs in the page after GraphiQL's bundle: Monaco starts its workers from Parley's own URLs, and the
 * options come from a JSON block (no inline script, nothing interpolated into code).
 */
const START_SCRIPT = `const { workers, options } = JSON.parse(document.getElementById('graphiql-options').textContent)
self.MonacoEnvironment = { globalAPI: false, getWorkerUrl: (_moduleId, label) => workers[label] }
YogaGraphiQL.renderYogaGraphiQL(document.getElementById('root'), options)
`

const JS = 'text/javascript; charset=utf-8'

/**
 * GraphiQL served entirely by Parley: @graphql-yoga/render-graphiql (pinned to graphql-yoga's version)
 * bundles the JS, CSS (fonts inlined), Monaco workers and favicon as strings; Yoga's default page
 * loads them from a CDN. Here each is a file under `<graphqlPath>/graphiql/`, fingerprinted and
 * cached for good, so the page itself stays small. In development the page opens with a fresh token
 * for DEV_USER, so the schema fetch and a first query work; in production nothing is prefilled.
 */
export function parleyGraphiQL(opts: { graphqlPath: string; authSecret: string | null; production: boolean }) {
  const base = `${opts.graphqlPath}/graphiql/`
  let bundle: Promise<Bundle> | undefined
  // Loaded on first use: 9 MB of strings that most processes (tests, API-only servers) never need.
  const loadBundle = () =>
    (bundle ??= import('@graphql-yoga/render-graphiql/graphiql').then((assets) => buildBundle(base, assets)))

  const options = async (): Promise<GraphiQLOptions> => {
    // Development always has a secret (resolveAuthSecret creates one).
    if (opts.production || !opts.authSecret) return { title: 'Parley', defaultQuery: DEFAULT_QUERY }
    const token = await signToken(opts.authSecret, DEV_USER, { expiresIn: DEV_TOKEN_LIFETIME })
    const headers = JSON.stringify({ Authorization: `Bearer ${token}` }, null, 2)
    // `headers` fills the first tab, `defaultHeaders` each tab opened later.
    return { title: 'Parley', defaultQuery: DEFAULT_QUERY, headers, defaultHeaders: headers }
  }

  const render = async (options: GraphiQLOptions): Promise<string> => renderPage(await loadBundle(), options)

  const assets: Plugin = {
    onRequest({ url, request, endResponse, fetchAPI }) {
      if (!url.pathname.startsWith(base)) return
      return loadBundle().then((loaded) => {
        const asset = loaded.files.get(url.pathname.slice(base.length))
        if (!asset || (request.method !== 'GET' && request.method !== 'HEAD')) {
          endResponse(new fetchAPI.Response('not found', { status: 404, headers: { 'content-type': 'text/plain' } }))
          return
        }
        const headers = { 'content-type': asset.contentType, 'cache-control': 'public, max-age=31536000, immutable' }
        endResponse(new fetchAPI.Response(request.method === 'HEAD' ? null : asset.body, { status: 200, headers }))
      })
    },
  }

  return { options, render, assets }
}

function buildBundle(base: string, assets: typeof import('@graphql-yoga/render-graphiql/graphiql')): Bundle {
  const files = new Map<string, Asset>()
  const add = (name: string, ext: string, asset: Asset) => {
    const file = `${name}.${createHash('sha256').update(asset.body).digest('hex').slice(0, 16)}.${ext}`
    files.set(file, asset)
    return base + file
  }
  const icon = /^data:([^;,]+);base64,(.*)$/s.exec(assets.favicon)
  if (!icon) throw new Error('render-graphiql: the favicon is not a base64 data URL')
  return {
    files,
    css: add('graphiql', 'css', { body: assets.css, contentType: 'text/css; charset=utf-8' }),
    js: add('graphiql', 'js', { body: assets.js, contentType: JS }),
    start: add('start', 'js', { body: START_SCRIPT, contentType: JS }),
    favicon: add('favicon', 'ico', { body: new Uint8Array(Buffer.from(icon[2]!, 'base64')), contentType: icon[1]! }),
    // Keyed by the labels Monaco asks getWorkerUrl for.
    workers: {
      editorWorkerService: add('editor.worker', 'js', { body: assets.editorWorkerService, contentType: JS }),
      json: add('json.worker', 'js', { body: assets.jsonWorker, contentType: JS }),
      graphql: add('graphql.worker', 'js', { body: assets.graphqlWorker, contentType: JS }),
    },
  }
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

function renderPage(bundle: Bundle, options: GraphiQLOptions): string {
  // Inside <script type="application/json"> only "</script" could end the block early.
  const data = JSON.stringify({ workers: bundle.workers, options }).replace(/</g, '\\u003c')
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <title>${escapeHtml(options.title ?? 'GraphiQL')}</title>
    <link rel="icon" href="${bundle.favicon}" />
    <link rel="stylesheet" href="${bundle.css}" />
  </head>
  <body id="body" class="no-focus-outline">
    <noscript>GraphiQL needs JavaScript.</noscript>
    <div id="root"></div>
    <script id="graphiql-options" type="application/json">${data}</script>
    <script src="${bundle.js}"></script>
    <script src="${bundle.start}"></script>
  </body>
</html>
`
}
