import type { IncomingMessage, ServerResponse } from 'node:http'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { createGzip } from 'node:zlib'
import type { Identity, Viewer } from '../domain/core/app.ts'
import { DomainError } from '../domain/core/index.ts'
import { exportConversation } from '../domain/governance/index.ts'
import type { App } from '../domain/core/app.ts'

const EXPORT_PATH = /^\/export\/conversations\/([^/?]+)$/

const STATUS_OF: Partial<Record<string, number>> = {
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  BAD_USER_INPUT: 400,
}

function refuse(res: ServerResponse, status: number, code: string, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' })
  res.end(JSON.stringify({ errors: [{ message, extensions: { code } }] }))
}

/**
 * GET /export/conversations/{id} (issue 45): NDJSON in seq order for an operator's bearer token,
 * gzip when the client accepts it; 401 without a valid token, 403 for others, 404 for a missing
 * conversation. Answers false for any other path. The body streams with backpressure: a slow reader
 * holds up the next page's read, not memory.
 */
export function handleExport(
  req: IncomingMessage,
  res: ServerResponse,
  deps: {
    app: App
    authenticate(authorization: string | undefined): Promise<Identity | null>
    resolveViewer(identity: Identity): Promise<Viewer>
    log: (error: unknown) => void
  },
): boolean {
  const path = req.url?.split('?')[0] ?? ''
  const match = EXPORT_PATH.exec(path)
  if (!match) return false
  void (async () => {
    if (req.method !== 'GET') return refuse(res, 405, 'BAD_USER_INPUT', 'use GET')
    const identity = await deps.authenticate(req.headers.authorization).catch(() => null)
    if (!identity) return refuse(res, 401, 'UNAUTHENTICATED', 'a bearer token is required')
    let lines: AsyncGenerator<Buffer>
    try {
      lines = await exportConversation(deps.app, await deps.resolveViewer(identity), decodeURIComponent(match[1]!))
    } catch (error) {
      if (!(error instanceof DomainError)) throw error
      return refuse(res, STATUS_OF[error.code] ?? 500, error.code, error.message)
    }
    const gzip = /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''))
    res.writeHead(200, {
      'content-type': 'application/x-ndjson; charset=utf-8',
      'cache-control': 'no-store',
      ...(gzip ? { 'content-encoding': 'gzip' } : {}),
    })
    // One page ahead of the socket at most: memory is bounded by the page, not by the reader's pace.
    const body = Readable.from(lines, { highWaterMark: 1 })
    await (gzip ? pipeline(body, createGzip(), res) : pipeline(body, res))
  })().catch((error: unknown) => {
    deps.log(error)
    // Headers sent: the cut stream is the client's signal; otherwise a plain 500.
    if (res.headersSent) res.destroy()
    else refuse(res, 500, 'INTERNAL_SERVER_ERROR', 'unexpected error')
  })
  return true
}
