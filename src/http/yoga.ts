import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor'
import type { ServerResponse } from 'node:http'
import { GraphQLError, type DocumentNode } from 'graphql'
import { LRUCache } from 'lru-cache'
import { createLogger, createYoga, type YogaLogger } from 'graphql-yoga'
import { createAuthenticator, type Authenticator } from './auth/authenticate.ts'
import type { CorsOrigins, TokenProvider } from '../config/auth.ts'
import { corsFor } from './cors.ts'
import type { Identity, Viewer } from '../domain/core/index.ts'
import { isDatabaseOutage, RETRY_AFTER_MS, type DatabaseAvailability } from '../db/availability.ts'
import type { Parley } from '../app.ts'
import { createLoaders } from '../domain/history/index.ts'
import { createViewerResolver } from '../domain/members/index.ts'
import { isPoolTimeout } from '../db/client.ts'
import { DomainError, retryLater } from '../domain/core/index.ts'
import { useCompiledExecution } from './plugins/useCompiledExecution.ts'
import { parleyGraphiQL } from './graphiql.ts'
import { useInputHygiene } from './plugins/useInputHygiene.ts'
import { requestIdOf, tagWithRequest } from '../ops/logger.ts'
import type { Metrics } from '../ops/metrics.ts'
import { useMetrics } from './plugins/useMetrics.ts'
import { useOperationSpans } from './plugins/useOperationSpans.ts'
import { useQueryLimits } from './plugins/useQueryLimits.ts'
import { limitAnonymous, useRateLimits, type ClientPeer } from './plugins/useRateLimits.ts'
import { useTokenExpiry } from './plugins/useTokenExpiry.ts'
import { useBodyLimit } from './plugins/useBodyLimit.ts'
import { useErrorRequestIds } from './plugins/useErrorRequestIds.ts'
import type { Context } from '../schema/context.ts'
import { schema } from '../schema/index.ts'
import { useValidationCache } from './plugins/useValidationCache.ts'

export type YogaOptions = {
  app: Parley
  /** HS256 tokens' secret; null: HS256 tokens are refused (production with only an identity provider). */
  authSecret: string | null
  /** The identity provider whose tokens are accepted too (AUTH_JWKS_URL / AUTH_ISSUER). */
  provider?: TokenProvider | null
  /** Browser origins allowed (CORS_ORIGINS); absent: every origin in development, none in production. */
  corsOrigins?: CorsOrigins
  /** Shared with the WebSocket server's connection check (one token cache and key set per server). */
  authenticate?: Authenticator
  maxBodyBytes: number
  production: boolean
  logger?: YogaLogger
  metrics?: Metrics
  tracing?: boolean
  /** Shared with the WebSocket server's connection check (one viewer cache per server). */
  resolveViewer?: (identity: Identity) => Promise<Viewer>
  /** Turns database outage errors into UNAVAILABLE (else they are masked like any unexpected error). */
  availability?: DatabaseAvailability
}

/**
 * Where the viewer's token arrives: the HTTP header, or graphql-ws connectionParams; `req` is the
 * node request (its address); `requestId` the WebSocket's, or over HTTP the x-request-id header
 * http/server.ts set on the response `res`.
 */
type ServerContext = {
  request?: Request
  connectionParams?: Record<string, unknown>
  req?: ClientPeer
  res?: Pick<ServerResponse, 'getHeader'>
  requestId?: string
  /** A WebSocket's scheme and host, from its upgrade request (HTTP takes them from `request`). */
  origin?: string
}

export const GRAPHQL_PATH = '/graphql'

/**
 * Expected failures (DomainError) pass unchanged; GraphQL's own parse/validation/coercion errors
 * keep or get a code; a database outage is UNAVAILABLE (logged once per outage, not per request);
 * anything else is logged and masked.
 */
function maskError(logger: YogaLogger, availability: DatabaseAvailability | undefined) {
  return (error: unknown): Error => {
    const original = error instanceof GraphQLError ? error.originalError : error
    if (original instanceof DomainError) return error as GraphQLError
    const refused = availability?.refuseIfOutage(original)
    if (refused) {
      // Keeps the field path, so a client sees which part of its operation could not be answered.
      return error instanceof GraphQLError
        ? new GraphQLError(refused.message, {
            nodes: error.nodes,
            path: error.path,
            originalError: refused,
            extensions: refused.extensions,
          })
        : refused
    }
    // Parse, validation and input-coercion errors (graphql-js wraps some in a second GraphQLError).
    if (error instanceof GraphQLError && (!original || original instanceof GraphQLError)) {
      // Yoga's own request checks say BAD_REQUEST, which is not a contract code.
      if (!error.extensions.code || error.extensions.code === 'BAD_REQUEST')
        (error.extensions as Record<string, unknown>).code = 'BAD_USER_INPUT'
      return error
    }
    // An exhausted pool is load, not a bug: the client is told to retry, and nothing is logged per request.
    if (isPoolTimeout(original)) return retryLater('UNAVAILABLE', 'the database is busy; retry shortly', RETRY_AFTER_MS)
    logger.error('unexpected error', original, { requestId: requestIdOf(original) })
    return new GraphQLError('Unexpected error.', { extensions: { code: 'INTERNAL_SERVER_ERROR' } })
  }
}

/**
 * Yoga logs the original of every error the mask replaced, stack and all; a database outage is
 * logged once per outage by DatabaseAvailability instead, and a wait for a pool connection that
 * timed out is load (counted in the metrics as UNAVAILABLE), so those are left out here.
 */
const withoutOutageErrors = (logger: YogaLogger): YogaLogger => ({
  debug: (...args: unknown[]) => logger.debug(...args),
  info: (...args: unknown[]) => logger.info(...args),
  warn: (...args: unknown[]) => logger.warn(...args),
  error: (...args: unknown[]) => {
    if (args.some((arg) => isDatabaseOutage(arg) || isPoolTimeout(arg))) return
    const requestId = args.map(requestIdOf).find(Boolean)
    logger.error(...args, ...(requestId ? [{ requestId }] : []))
  },
})

export function createYogaServer(opts: YogaOptions) {
  const resolveViewer = opts.resolveViewer ?? createViewerResolver(opts.app)
  const authenticate = opts.authenticate ?? createAuthenticator({ secret: opts.authSecret, provider: opts.provider })
  const logger = opts.logger ?? createLogger(opts.production ? 'info' : 'warn')
  const graphiql = parleyGraphiQL({
    graphqlPath: GRAPHQL_PATH,
    authSecret: opts.authSecret,
    production: opts.production,
  })
  return createYoga<ServerContext, Context>({
    schema,
    graphqlEndpoint: GRAPHQL_PATH,
    logging: opts.availability ? withoutOutageErrors(logger) : logger,
    landingPage: false,
    cors: corsFor(opts.corsOrigins ?? (opts.production ? [] : '*')),
    graphiql: graphiql.options,
    renderGraphiQL: graphiql.render,
    maskedErrors: { isDev: false, maskError: maskError(logger, opts.availability) },
    // useBodyLimit below refuses by Content-Length and refuses bodies without one, and Node's HTTP
    // parser reads no more than Content-Length; Yoga's own limit would pipe every body through an
    // extra TransformStream (about 4 % of the server CPU of a send) to count bytes that can no longer exceed it.
    maxRequestBodySize: false,
    // Parsed documents by source as in Yoga's default, without its hour-long ttl, whose clock read
    // re-arms a timer on lookups; useValidationCache below caches validation without Yoga's per-request key.
    parserAndValidationCache: {
      documentCache: new LRUCache<string, DocumentNode>({ max: 1024 }),
      validationCache: false,
    },
    plugins: [
      graphiql.assets,
      useBodyLimit(opts.maxBodyBytes),
      // Bodies and parameters that are not UTF-8 or JSON, strings PostgreSQL cannot store (README "Limits").
      useInputHygiene(),
      // Node, depth, alias, directive, token and nesting limits (README "Limits", docs/decisions/0060).
      useQueryLimits(),
      // Per-user, per-connection rate limits by operation (decision 0130).
      useRateLimits(),
      // A subscription (SSE or graphql-ws) ends when its token expires (issue 48) or its user is deactivated (issue 45).
      useTokenExpiry(),
      // graphql-armor only hides field suggestions in production; its limits answer "Syntax Error:".
      EnvelopArmorPlugin({
        maxDepth: { enabled: false },
        maxAliases: { enabled: false },
        maxDirectives: { enabled: false },
        maxTokens: { enabled: false },
        costLimit: { enabled: false },
        blockFieldSuggestion: { enabled: opts.production },
      }),
      useCompiledExecution(),
      // After compiled execution: it wraps the compiled executor, so the operation's span is active while its resolvers run.
      ...(opts.tracing ? [useOperationSpans()] : []),
      ...(opts.metrics ? [useMetrics(opts.metrics)] : []),
      // Before Yoga's error mask, which it adds after these plugins.
      useErrorRequestIds(),
      // Last, where Yoga's own validation cache was: it keeps the result as the plugins above left it.
      useValidationCache(),
    ],
    context: (server) => {
      const requestId = server.requestId ?? (server.res?.getHeader('x-request-id') as string | undefined)
      return contextOf(server).then(
        (context): Context => ({ ...context, requestId }),
        (error: unknown) => {
          tagWithRequest(error, requestId)
          throw error
        },
      )
    },
  })

  async function contextOf({ request, connectionParams, req, origin }: ServerContext): Promise<Context> {
    const authorization =
      request?.headers.get('authorization') ?? (connectionParams?.authorization as string | undefined)
    // Without a valid token the caller is counted by address, whether answered (the schema) or refused.
    const identity = await authenticate(authorization).catch(async (error: unknown) => {
      await limitAnonymous(opts.app, req)
      throw error
    })
    if (!identity) await limitAnonymous(opts.app, req)
    const viewer: Viewer | null = identity ? await resolveViewer(identity) : null
    return {
      app: opts.app,
      viewer,
      loaders: createLoaders(opts.app.db, viewer),
      origin: request ? new URL(request.url).origin : (origin ?? ''),
      ...(identity ? { tokenExpiresAt: identity.expiresAt } : {}),
    }
  }
}
