import type { CORSOptions } from 'graphql-yoga'
import type { CorsOrigins } from '../config/auth.ts'

/**
 * Yoga's cors option for CORS_ORIGINS. Parley authenticates with bearer tokens, never cookies, so no
 * answer carries Access-Control-Allow-Credentials (Yoga's default adds it to every reflected origin).
 * An allowed origin is reflected with `Vary: Origin`; any other gets no CORS headers, so the browser
 * keeps the answer from the page.
 */
export function corsFor(origins: CorsOrigins) {
  const allowed: CORSOptions = { origin: ['*'], credentials: false }
  return (request: Request): CORSOptions => {
    const origin = request.headers.get('origin')
    return origins === '*' || (origin !== null && origins.includes(origin)) ? allowed : false
  }
}
