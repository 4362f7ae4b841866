import type { IncomingMessage } from 'node:http'
import { GraphQLError } from 'graphql'
import { useServer, type Extra } from 'graphql-ws/use/ws'
import type { WebSocketServer } from 'ws'
import type { Parley } from '../app.ts'
import type { DatabaseAvailability } from '../db/availability.ts'
import { tierOf } from '../domain/rateLimits/index.ts'
import type { createViewerResolver } from '../domain/members/index.ts'
import { connectionIdFrom, type Logger } from '../ops/logger.ts'
import type { Metrics } from '../ops/metrics.ts'
import type { createAuthenticator } from './auth/authenticate.ts'
import type { ClientPeer } from './plugins/useRateLimits.ts'
import { limitSocketLifetime } from './plugins/useTokenExpiry.ts'
import { sharedPayloads } from './webSocket.ts'
import type { createYogaServer } from './yoga.ts'

/** GraphQL over WebSocket (graphql-ws) on the server's /graphql upgrades, through Yoga's envelop. */

export type GraphqlWsDeps = {
  yoga: ReturnType<typeof createYogaServer>
  app: Parley
  authenticate: ReturnType<typeof createAuthenticator>
  resolveViewer: ReturnType<typeof createViewerResolver>
  availability: DatabaseAvailability
  metrics?: Metrics
  log?: Logger
}

/** Envelop's execute and subscribe for one operation, carried to graphql-ws as its root value. */
type EnvelopRoot = Pick<ReturnType<ReturnType<typeof createYogaServer>['getEnveloped']>, 'execute' | 'subscribe'>

/** Close code for a user over their open-WebSocket limit (graphql-ws's own "too many" code). */
const TOO_MANY_SOCKETS = 4429

/** What a socket's operations need of its upgrade request (onConnect puts it in graphql-ws's extra). */
type SocketExtra = Extra & { requestId?: string; peer?: ClientPeer; origin?: string }

/** The part of an upgrade request the address limits read (rateLimitPlugin's clientAddress). */
const peerOf = (request: IncomingMessage): ClientPeer => ({
  headers: { 'x-forwarded-for': request.headers['x-forwarded-for'] },
  socket: { remoteAddress: request.socket.remoteAddress },
})

/**
 * graphql-ws runs each operation through Yoga's envelop, so plugins, limits and context apply to
 * subscriptions exactly as to HTTP.
 */
export function serveGraphqlWs(wss: WebSocketServer, deps: GraphqlWsDeps): void {
  /** Errors graphql-ws answers before execution, counted like HTTP's (execution errors count in useMetrics). */
  const refused = (errors: readonly GraphQLError[]) => {
    for (const error of errors) deps.metrics?.countError(error.extensions.code ?? 'GRAPHQL_VALIDATION_FAILED')
    return errors
  }

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
        deps.log?.debug({ requestId }, 'websocket connected')
        const authorization = ctx.connectionParams?.authorization
        if (typeof authorization !== 'string') return false
        const identity = await deps.authenticate(authorization).catch(() => null)
        if (!identity) return false
        // A deactivated user is refused like a bad token.
        const viewer = await deps.resolveViewer(identity).catch(() => null)
        if (!viewer) return false
        const tier = tierOf(viewer)
        const release = deps.app.limits.openSocket(tier, identity.handle)
        if (!release) {
          // graphql-ws clients do not retry this code: another socket must close first.
          ctx.extra.socket.close(
            TOO_MANY_SOCKETS,
            `RATE_LIMITED: at most ${deps.app.limits.socketLimit(tier)} open WebSockets per user`,
          )
          return false
        }
        ctx.extra.socket.once('close', release)
        limitSocketLifetime(ctx.extra.socket, identity.expiresAt, deps.app.accounts, viewer.userId)
        return true
      },
      // onSubscribe hands over envelop's own execute and subscribe as the root value (below).
      execute: (args) => (args.rootValue as EnvelopRoot).execute(args),
      subscribe: (args) => (args.rootValue as EnvelopRoot).subscribe(args),
      onSubscribe: async (ctx, _id, params) => {
        const extra: SocketExtra = ctx.extra
        const { schema, execute, subscribe, contextFactory, parse, validate } = deps.yoga.getEnveloped({
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
          const outage = deps.availability.refuseIfOutage(error)
          if (outage) return refused([outage])
          throw error
        }
      },
    },
    wss,
  )
}
