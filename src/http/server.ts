import { createServer, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createLogger } from 'graphql-yoga'
import { WebSocketServer } from 'ws'
import { createAuthenticator } from './auth/authenticate.ts'
import { DatabaseAvailability, RETRY_AFTER_MS } from '../db/availability.ts'
import type { Parley } from '../app.ts'
import { createViewerResolver } from '../domain/members/index.ts'
import { DEFAULT_KEEP_ALIVE_MS } from '../config/env.ts'
import { retryLater } from '../domain/core/index.ts'
import { createHealth, databaseReadiness, type ReadinessCheck } from '../ops/health.ts'
import { requestIdFrom, yogaLogger, type Logger } from '../ops/logger.ts'
import type { Metrics } from '../ops/metrics.ts'
import { Utf8WebSocket } from './webSocket.ts'
import { serveGraphqlWs } from './graphqlWs.ts'
import { handleExport } from './export.ts'
import { MEDIA_PATH } from '../domain/files/index.ts'
import { serveMedia } from './media.ts'
import { webApp, type WebAppOptions } from './webApp.ts'
import { createYogaServer, GRAPHQL_PATH, type YogaOptions } from './yoga.ts'

export type ParleyServer = {
  server: Server
  yoga: ReturnType<typeof createYogaServer>
  /** Listens on `port` (0 = any free port) and resolves with the GraphQL URL. */
  listen(port: number, host?: string): Promise<string>
  /**
   * Stops accepting work (/readyz and every new request answer 503, no new WebSockets), tells
   * WebSocket clients to reconnect elsewhere (1001), ends SSE streams, lets running requests finish
   * for at most the grace period, then cuts what remains (sockets that stopped reading, half-sent
   * requests) and resolves. Clients resume with sincePts, so nothing committed is lost to them.
   */
  close(): Promise<void>
}

/** How long a shutdown waits for running requests by default. */
const DEFAULT_SHUTDOWN_GRACE_MS = 10_000

/** WebSocket close code for a server going away: graphql-ws clients retry on it. */
const GOING_AWAY = 1001

export type ServerOptions = YogaOptions & {
  app: Parley
  /** Structured logs (pino); Yoga's own messages go to it too unless `logger` is given. */
  log?: Logger
  metrics?: Metrics
  /** Serve /metrics on this server's port (else only on a separate METRICS_PORT listener, or not at all). */
  serveMetrics?: boolean
  /** Dependencies /readyz checks besides the database (Redis when configured). */
  readinessChecks?: ReadinessCheck[]
  /** How long close() lets running requests and closing sockets finish (SHUTDOWN_GRACE_MS). */
  shutdownGraceMs?: number
  /** How long an idle HTTP keep-alive connection stays open (HTTP_KEEP_ALIVE_MS). */
  keepAliveMs?: number
  /** The chat workbench at `/` (web/); absent or null: not served. */
  webApp?: WebAppOptions | null
}

/** A request arriving while the server drains: try another instance. */
function refuseStopping(res: ServerResponse): void {
  res.writeHead(503, {
    'content-type': 'application/json',
    connection: 'close',
    'retry-after': String(RETRY_AFTER_MS / 1000),
  })
  res.end(
    JSON.stringify({ errors: [retryLater('UNAVAILABLE', 'this instance is shutting down; retry', RETRY_AFTER_MS)] }),
  )
}

export function createParleyServer(opts: ServerOptions): ParleyServer {
  const logger = opts.logger ?? (opts.log ? yogaLogger(opts.log) : createLogger(opts.production ? 'info' : 'warn'))
  const availability = new DatabaseAvailability(() => opts.app.db.$queryRaw`SELECT 1`, logger)
  const resolveViewer = createViewerResolver(opts.app)
  const authenticate = createAuthenticator({ secret: opts.authSecret, provider: opts.provider })
  const yoga = createYogaServer({ ...opts, resolveViewer, authenticate, logger, availability })
  const exportDeps = {
    app: opts.app,
    authenticate: (authorization: string | undefined) => authenticate(authorization),
    resolveViewer,
    log: (error: unknown) => logger.error('export failed', error),
  }
  const serveWebApp = opts.webApp ? webApp(opts.webApp) : () => false
  const health = createHealth(
    [databaseReadiness(opts.app.db, { availability }), ...(opts.readinessChecks ?? [])],
    opts.app.replicas,
  )
  opts.metrics?.bindApp(opts.app)
  let stopping = false
  // Requests running, so the drain knows when it is done.
  let running = 0
  const server = createServer((req, res) => {
    running++
    res.once('close', () => running--)
    if (health.handle(req, res)) return
    if (stopping) return refuseStopping(res)
    if (opts.serveMetrics && opts.metrics && req.url === '/metrics') return void opts.metrics.serve(req, res)
    if (handleExport(req, res, exportDeps)) return
    if (req.url?.startsWith(MEDIA_PATH)) return void serveMedia(opts.app, req, res, opts.log)
    if (serveWebApp(req, res)) return
    // Yoga's context reads the id back from this header: a server context of our own besides
    // whatwg-node's would be merged into a new object per request (about 2 % of a `{ __typename }`).
    res.setHeader('x-request-id', requestIdFrom(req.headers['x-request-id']))
    // Yoga answers its own failures; nothing is left to catch here.
    void yoga(req, res)
  })
  server.keepAliveTimeout = opts.keepAliveMs ?? DEFAULT_KEEP_ALIVE_MS
  // A request's headers may take as long as Node allows, and never less than an idle connection may wait.
  server.headersTimeout = Math.max(server.headersTimeout, server.keepAliveTimeout + 1_000)
  const wss = new WebSocketServer({
    server,
    path: GRAPHQL_PATH,
    maxPayload: opts.maxBodyBytes,
    WebSocket: Utf8WebSocket,
  })
  if (opts.metrics) wss.on('connection', (socket) => opts.metrics!.trackWebSocket(socket))

  serveGraphqlWs(wss, {
    yoga,
    app: opts.app,
    authenticate,
    resolveViewer,
    availability,
    metrics: opts.metrics,
    log: opts.log,
  })

  return {
    server,
    yoga,
    listen: (port, host) =>
      new Promise((resolve, reject) => {
        server.once('error', reject)
        server.listen(port, host, () => {
          const { port: bound } = server.address() as AddressInfo
          resolve(`http://localhost:${bound}${GRAPHQL_PATH}`)
        })
      }),
    async close() {
      if (stopping) return
      stopping = true
      health.stopAccepting()
      availability.close()
      // No new upgrades; open sockets get 1001 and their subscriptions (and SSE streams) end.
      const wsClosed = new Promise<void>((resolve) => wss.close(() => resolve()))
      for (const socket of wss.clients) socket.close(GOING_AWAY, 'server shutting down')
      opts.app.hub.close()
      const deadline = Date.now() + (opts.shutdownGraceMs ?? DEFAULT_SHUTDOWN_GRACE_MS)
      // Keep-alive connections go idle as their last response ends: sweep them while requests finish.
      while ((running > 0 || wss.clients.size > 0) && Date.now() < deadline) {
        server.closeIdleConnections()
        await new Promise((resolve) => setTimeout(resolve, 25))
      }
      // What is left did not finish in time: a socket that stopped reading never answers the close
      // handshake, a half-sent request never completes.
      for (const socket of wss.clients) socket.terminate()
      const closed = new Promise<void>((resolve) => server.close(() => resolve()))
      server.closeAllConnections()
      await Promise.all([wsClosed, closed])
    },
  }
}
