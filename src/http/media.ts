import type { IncomingMessage, ServerResponse } from 'node:http'
import { pipeline } from 'node:stream/promises'
import type { Parley } from '../app.ts'
import { openDownload, receiveUpload } from '../domain/files/index.ts'
import type { Logger } from '../ops/logger.ts'

/**
 * Cross-origin by design: a signed URL is the credential (no cookie is read), so a web client on any
 * origin may PUT to it and read from it.
 */
const CORS = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, HEAD, PUT, OPTIONS',
  'access-control-allow-headers': 'content-type, range',
  'access-control-expose-headers': 'content-length, content-range, accept-ranges',
}

function answer(res: ServerResponse, status: number, message: string, extra: Record<string, string> = {}) {
  res.writeHead(status, { ...CORS, 'content-type': 'text/plain; charset=utf-8', ...extra })
  res.end(message)
}

/**
 * /media/…: the PUT of a slot's bytes and the GET of an attachment or thumbnail, both by signed URL
 * (domain/files/signing.ts). Only the local store streams bytes here; with S3 a GET is redirected to
 * a presigned URL once access is checked.
 */
export async function serveMedia(app: Parley, req: IncomingMessage, res: ServerResponse, log?: Logger) {
  const url = new URL(req.url ?? '/', 'http://parley.invalid')
  try {
    if (req.method === 'OPTIONS') return answer(res, 204, '')
    if (req.method === 'PUT') {
      const received = await receiveUpload(app, url, req, req.headers['content-length'])
      // A body refused half-read is not read on: the connection closes after the answer.
      return answer(res, received.status, received.message, received.status === 200 ? {} : { connection: 'close' })
    }
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return answer(res, 405, 'GET, HEAD or PUT', { allow: 'GET, HEAD, PUT' })
    const download = await openDownload(app, url, req.headers.range)
    if (download.status === 302)
      return answer(res, 302, '', { location: download.location, 'cache-control': 'no-store' })
    if (download.status === 416)
      return answer(res, 416, 'range not satisfiable', { 'content-range': `bytes */${download.size}` })
    if (!('body' in download))
      return download.status === 403
        ? answer(res, 403, 'this media URL is not valid, has expired, or no longer grants access')
        : answer(res, 404, 'not found')
    res.writeHead(download.status, { ...CORS, ...download.headers })
    if (req.method === 'HEAD') {
      download.body.destroy()
      return void res.end()
    }
    await pipeline(download.body, res)
  } catch (error) {
    // A client that went away mid-download is no failure of Parley's.
    if (res.destroyed || (error as NodeJS.ErrnoException).code === 'ERR_STREAM_PREMATURE_CLOSE') return
    log?.error({ err: error }, 'media request failed')
    if (!res.headersSent) answer(res, 500, 'internal error')
    else res.destroy()
  }
}
