import type { IncomingMessage, ServerResponse } from 'node:http'
import { existsSync } from 'node:fs'
import path from 'node:path'
import sirv from 'sirv'
import { PROJECT_ROOT } from '../lib/projectRoot.ts'
import { signToken } from './auth/hs256.ts'
import { DEV_TOKEN_LIFETIME } from './graphiql.ts'

/** Where `npm run build` puts the workbench (web/vite.config.ts builds into it). */
const WEB_APP_DIR = path.join(PROJECT_ROOT, 'dist', 'web')
/** The development sign-in: POST `{ "handle": "alice" }`, answered `{ "token": "…" }`. */
const DEV_TOKEN_PATH = '/dev/token'

/** A handle the development sign-in mints a token for: letters, digits, `.`, `_` and `-`. */
const DEV_HANDLE = /^[\p{L}\p{N}._-]{1,64}$/u
const MAX_SIGN_IN_BYTES = 1_000

export type WebAppOptions = {
  /** The built app's folder (default WEB_APP_DIR); absent: `/` says how to build it. */
  dir?: string
  /** HS256 secret for the development sign-in; null: no sign-in endpoint (production). */
  devTokenSecret: string | null
}

/**
 * The chat workbench (web/) at `/`: Vite's fingerprinted files under /assets/ are cached for good,
 * index.html is revalidated on every load so a new build shows at once. In development the app
 * signs in by handle through DEV_TOKEN_PATH; in production that path does not exist.
 */
export function webApp(opts: WebAppOptions) {
  const dir = opts.dir ?? WEB_APP_DIR
  const built = existsSync(path.join(dir, 'index.html'))
  const serve = built
    ? sirv(dir, {
        etag: true,
        setHeaders: (res, pathname) =>
          res.setHeader(
            'cache-control',
            pathname.startsWith('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache',
          ),
      })
    : null
  /** Answers the request when it is the app's (true), else leaves it to the API. */
  return (req: IncomingMessage, res: ServerResponse): boolean => {
    const pathname = (req.url ?? '/').split('?')[0]!
    if (pathname === DEV_TOKEN_PATH && opts.devTokenSecret) {
      void signIn(opts.devTokenSecret, req, res)
      return true
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') return false
    if (pathname !== '/' && pathname !== '/index.html' && !pathname.startsWith('/assets/')) return false
    if (!serve) {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' })
      res.end('The web app is not built: run `npm run build` (npm start does).\n')
      return true
    }
    serve(req, res, () => {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' })
      res.end('not found\n')
    })
    return true
  }
}

async function signIn(secret: string, req: IncomingMessage, res: ServerResponse) {
  const answer = (status: number, body: object) => {
    res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' })
    res.end(JSON.stringify(body))
  }
  if (req.method !== 'POST') return answer(405, { error: 'POST { "handle": "…" }' })
  let body = ''
  for await (const chunk of req) {
    body += String(chunk)
    if (body.length > MAX_SIGN_IN_BYTES) return answer(413, { error: 'body too large' })
  }
  let handle: unknown
  try {
    handle = (JSON.parse(body) as { handle?: unknown }).handle
  } catch {
    return answer(400, { error: 'the body must be JSON' })
  }
  if (typeof handle !== 'string' || !DEV_HANDLE.test(handle))
    return answer(400, { error: 'handle: 1 to 64 letters, digits, ".", "_" or "-"' })
  answer(200, { token: await signToken(secret, handle, { expiresIn: DEV_TOKEN_LIFETIME }) })
}
