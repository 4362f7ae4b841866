import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { GraphQLError } from 'graphql'
import { useServer, type Extra } from 'graphql-ws/use/ws'
import { createLogger } from 'graphql-yoga'
import { WebSocketServer } from 'ws'
import { createAuthenticator } from './auth/authenticate.ts'
import { DatabaseAvailability, RETRY_AFTER_MS } from '../db/availability.ts'
import type { Parley } from '../app.ts'
import { tierOf } from '../domain/rateLimits/index.ts'
import type { ClientPeer } from './plugins/useRateLimits.ts'
import { createViewerResolver } from '../domain/members/index.ts'
import { DEFAULT_KEEP_ALIVE_MS } from '../config/env.ts'
import { retryLater } from '../domain/core/index.ts'
import { createHealth, databaseReadiness, type ReadinessCheck } from '../ops/health.ts'
import { connectionIdFrom, requestIdFrom, yogaLogger, type Logger } from '../ops/logger.ts'
import type { Metrics } from '../ops/metrics.ts'
import { sharedPayloads, Utf8WebSocket } from './webSocket.ts'
import { handleExport } from './export.ts'
import { limitSocketLifetime } from './plugins/useTokenExpiry.ts'
import { MEDIA_PATH } from '../domain/files/index.ts'
import { serveMedia } from './media.ts'
import { webApp, type WebAppOptions } from './webApp.ts'
import { createYogaServer, GRAPHQL_PATH, type YogaOptions } from './yoga.ts'

/** Envelop's execute and subscribe for one operation, carried to graphql-ws as its root value. */
type EnvelopRoot = Pick<ReturnType<ReturnType<typeof createYogaServer>['getEnveloped']>, 'execute' | 'subscribe'>

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

/** Close code for a user over their open-WebSocket limit (graphql-ws's own "too many" code). */
const TOO_MANY_SOCKETS = 4429

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

/** What a socket's operations need of its upgrade request (onConnect puts it in graphql-ws's extra). */
type SocketExtra = Extra & { requestId?: string; peer?: ClientPeer; origin?: string }

/** The part of an upgrade request the address limits read (rateLimitPlugin's clientAddress). */
const peerOf = (request: IncomingMessage): ClientPeer => ({
  headers: { 'x-forwarded-for': request.headers['x-forwarded-for'] },
  socket: { remoteAddress: request.socket.remoteAddress },
})

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

  /** Errors graphql-ws answers before execution, counted like HTTP's (execution errors count in useMetrics). */
  const refused = (errors: readonly GraphQLError[]) => {
    for (const error of errors) opts.metrics?.countError(error.extensions.code ?? 'GRAPHQL_VALIDATION_FAILED')
    return errors
  }

  // graphql-ws runs each operation through Yoga's envelop, so plugins, limits and context apply to
  // subscriptions exactly as to HTTP.
  useServer(
    {
      // A result shared by subscribers with the same view is serialised once (webSocket.ts).
      ...sharedPayloads,
      // A socket needs a valid token: a missing or bad one is refused here (close 4403), before any
      // operation. Each subscribe authenticates again through Yoga's context (an expired token fails there).
      onConnect: async (ctx) => {
        const request = ctx.extra.request
        const requestId = connectionIdFrom(request.headers['x-request-id'])
        // graphql-ws would hold the whole upgrade request (headers, streams) as long as the socket is open.
        // The media URLs of this socket's events start with the host it was opened on (ws → http).
        const origin = `${'encrypted' in request.socket ? 'https' : 'http'}://${request.headers.host ?? 'localhost'}`
        Object.assign(ctx.extra, { requestId, peer: peerOf(request), origin, request: undefined })
        opts.log?.debug({ requestId }, 'websocket connected')
        const authorization = ctx.connectionParams?.authorization
        if (typeof authorization !== 'string') return false
        const identity = await authenticate(authorization).catch(() => null)
        if (!identity) return false
        // A deactivated user is refused like a bad token.
        const viewer = await resolveViewer(identity).catch(() => null)
        if (!viewer) return false
        const tier = tierOf(viewer)
        const release = opts.app.limits.openSocket(tier, identity.handle)
        if (!release) {
          // graphql-ws clients do not retry this code: another socket must close first.
          ctx.extra.socket.close(
            TOO_MANY_SOCKETS,
            `RATE_LIMITED: at most ${opts.app.limits.socketLimit(tier)} open WebSockets per user`,
          )
          return false
        }
        ctx.extra.socket.once('close', release)
        limitSocketLifetime(ctx.extra.socket, identity.expiresAt, opts.app.accounts, viewer.userId)
        return true
      },
      // onSubscribe hands over envelop's own execute and subscribe as the root value (below).
      execute: (args) => (args.rootValue as EnvelopRoot).execute(args),
      subscribe: (args) => (args.rootValue as EnvelopRoot).subscribe(args),
      onSubscribe: async (ctx, _id, params) => {
        const extra: SocketExtra = ctx.extra
        const { schema, execute, subscribe, contextFactory, parse, validate } = yoga.getEnveloped({
          ...ctx,
          req: extra.peer,
          requestId: extra.requestId,
          origin: extra.origin,
          socket: extra.socket,
          params,
          connectionParams: ctx.connectionParams,
        })
        try {
          const args = {
            schema,
            operationName: params.operationName,
            document: parse(params.query),
            variableValues: params.variables,
            contextValue: await contextFactory(),
            rootValue: { execute, subscribe },
          }
          const errors = validate(args.schema, args.document)
          if (errors.length) return refused(errors)
          return args
        } catch (error) {
          // A syntax error, a token refused by the context (e.g. expired since connecting) or a
          // database outage is this operation's error; thrown, graphql-ws would close the whole socket with 4500.
          if (error instanceof GraphQLError) {
            // Only a syntax error comes without a code here; HTTP answers it with this one.
            ;(error.extensions as Record<string, unknown>).code ??= 'GRAPHQL_PARSE_FAILED'
            return refused([error])
          }
          const outage = availability.refuseIfOutage(error)
          if (outage) return refused([outage])
          throw error
        }
      },
    },
    wss,
  )

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
