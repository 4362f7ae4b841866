import type { Parley } from '../app.ts'
import type { Viewer } from '../domain/core/index.ts'
import type { Loaders } from '../domain/history/index.ts'
import { DomainError } from '../domain/core/index.ts'

/** Per-request (or per-subscription) context. */
/** `requestId` names the HTTP request or WebSocket in log lines and trace attributes. */
/** `origin` is the scheme and host the client reached this server by, which Parley's media URLs start with. */
/** `tokenExpiresAt` is when the caller's token stops being accepted (ms; absent without a token): streams end then. */
export type Context = {
  app: Parley
  viewer: Viewer | null
  loaders: Loaders
  requestId?: string
  origin: string
  tokenExpiresAt?: number
}
export type AuthedContext = Context & { viewer: Viewer }

/** For fields below an authenticated root field. */
export function viewerOf(ctx: Context): Viewer {
  if (!ctx.viewer) throw new DomainError('UNAUTHENTICATED', 'sign in with "Authorization: Bearer <token>"')
  return ctx.viewer
}
