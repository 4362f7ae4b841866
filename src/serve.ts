import cluster from 'node:cluster'
import path from 'node:path'
import { signToken } from './http/auth/hs256.ts'
import { localMediaStore, s3MediaStore, startAttachmentSweeper } from './domain/files/index.ts'
import type { Config } from './config/env.ts'
import { createDb } from './db/client.ts'
import { openReplicas } from './db/replicas.ts'
import type { EmbeddedDatabase } from './db/embedded.ts'
import { seedDemo } from './ops/demo.ts'
import { createApp, settingsFromConfig } from './app.ts'
import { startRetentionSweeper } from './domain/governance/index.ts'
import { startReminderScheduler } from './domain/lifecycle/index.ts'
import { loadSensitiveWords } from './domain/send/index.ts'
import { startWebhookWorker } from './domain/webhooks/index.ts'
import { startPushWorker } from './domain/push/index.ts'
import { startStreamSweeper } from './domain/streams/index.ts'
import { DEV_TOKEN_LIFETIME, DEV_USER } from './http/graphiql.ts'
import { redisReadiness } from './ops/health.ts'
import type { Logger } from './ops/logger.ts'
import { createMetrics, listenMetrics } from './ops/metrics.ts'
import { startTracing, traceRealtime } from './ops/tracing.ts'
import { createRealtime } from './realtime/pubsub.ts'
import { createRateLimitRedis, createRedisRealtime } from './realtime/redis.ts'
import { createRedisPresence } from './realtime/presence.ts'
import { createWorkerPresence, createWorkerRealtime } from './realtime/workerBus.ts'
import { createParleyServer } from './http/server.ts'
import { findUserByHandle } from './store/users.ts'

export type ServeOptions = {
  config: Config
  /** null: HS256 tokens off (production with only an identity provider). */
  authSecret: string | null
  database: EmbeddedDatabase & { embedded: boolean }
  log: (message: string) => void
  logger: Logger
  /** Called with each thing opened, so a later failure of start-up can close it. */
  opened: (close: () => Promise<unknown>) => void
}

/** The GraphQL server on an open, migrated database: resolves once it listens; SIGINT/SIGTERM drain it. */
export async function serve({ config, authSecret, database, log, logger, opened }: ServeOptions): Promise<void> {
  const metrics = config.METRICS || config.METRICS_PORT ? createMetrics() : undefined
  const tracing =
    config.OTEL_EXPORTER_OTLP_ENDPOINT || config.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
      ? startTracing({ serviceName: config.OTEL_SERVICE_NAME })
      : undefined
  if (tracing) opened(() => tracing.shutdown())
  const db = createDb(database.url, {
    poolSize: config.DATABASE_POOL_SIZE,
    poolTimeoutMs: config.DATABASE_POOL_TIMEOUT_MS,
  })
  opened(() => db.$disconnect())
  const replicas = config.DATABASE_REPLICA_URLS.length
    ? openReplicas(db, config.DATABASE_REPLICA_URLS, {
        maxLagMs: config.REPLICA_MAX_LAG_MS,
        poolSize: config.DATABASE_POOL_SIZE,
        poolTimeoutMs: config.DATABASE_POOL_TIMEOUT_MS,
        log: (message) => logger.warn(message),
      })
    : undefined
  if (replicas) {
    replicas.start()
    opened(() => replicas.close())
    log(`reads of history, search, sync, the inbox and operators on ${config.DATABASE_REPLICA_URLS.length} replica(s)`)
  }
  // Several instances share events through Redis; a single one keeps them in process.
  const redis = config.REDIS_URL
    ? createRedisRealtime(config.REDIS_URL, {
        log: (message, error) => logger.error({ err: error }, message),
        observer: metrics?.redis,
      })
    : undefined
  const bus = redis ?? (cluster.isWorker ? createWorkerRealtime() : createRealtime())
  const counted = metrics ? metrics.countPublishes(bus) : bus
  const realtime = tracing ? traceRealtime(counted) : counted
  opened(() => realtime.close())
  if (tracing) log(`OpenTelemetry traces over OTLP/HTTP as service ${config.OTEL_SERVICE_NAME}`)
  log(
    config.MEDIA_S3_BUCKET
      ? `files in the S3 bucket ${config.MEDIA_S3_BUCKET}`
      : `files under ${path.join(config.DATA_DIR, 'media')}`,
  )
  log(
    config.REDIS_URL
      ? 'realtime events through Redis'
      : cluster.isWorker
        ? 'realtime events relayed between the workers of this machine'
        : 'realtime events in process (set REDIS_URL for several instances)',
  )
  const rateLimitStore =
    config.REDIS_URL && config.RATE_LIMITS
      ? createRateLimitRedis(config.REDIS_URL, (message) => logger.warn(message))
      : undefined
  if (rateLimitStore) opened(() => rateLimitStore.quit().catch(() => rateLimitStore.disconnect()))
  const app = createApp({
    db,
    realtime,
    replicas,
    rateLimitStore,
    // Who is online on any instance: through Redis when instances share it (closed with the bus), else
    // held by the primary of several workers.
    presence: config.REDIS_URL
      ? createRedisPresence(config.REDIS_URL, {
          ttlMs: config.PRESENCE_TTL_MS,
          log: (message, error) => logger.error({ err: error }, message),
        })
      : cluster.isWorker
        ? createWorkerPresence()
        : undefined,
    media: config.MEDIA_S3_BUCKET
      ? s3MediaStore({
          bucket: config.MEDIA_S3_BUCKET,
          endpoint: config.MEDIA_S3_ENDPOINT,
          region: config.MEDIA_S3_REGION,
        })
      : localMediaStore(path.join(config.DATA_DIR, 'media')),
    // Every instance signs media URLs alike; without AUTH_SECRET the webhook key serves (settingsFromConfig requires one).
    authSecret: authSecret ?? config.WEBHOOK_SECRET_KEY,
    settings: settingsFromConfig(config, loadSensitiveWords(config.SENSITIVE_WORDS_FILE), authSecret),
  })

  // A first embedded start gets demo data, so GraphiQL shows something real right away.
  // One worker of several seeds it: the first one forked.
  const seeds = !cluster.isWorker || cluster.worker?.id === 1
  if (database.embedded && seeds && !(await findUserByHandle(db, DEV_USER))) {
    await seedDemo(app)
    log('created demo users alice, bob, carol and helper-bot with a few conversations')
  }

  const production = config.NODE_ENV === 'production'
  const server = createParleyServer({
    app,
    authSecret,
    provider: config.AUTH_PROVIDER,
    corsOrigins: config.CORS_ORIGINS,
    maxBodyBytes: config.MAX_BODY_BYTES,
    production,
    log: logger,
    metrics,
    tracing: tracing !== undefined,
    serveMetrics: config.METRICS && !config.METRICS_PORT,
    readinessChecks: redis ? [redisReadiness(redis)] : [],
    shutdownGraceMs: config.SHUTDOWN_GRACE_MS,
    keepAliveMs: config.HTTP_KEEP_ALIVE_MS,
    // The development sign-in mints tokens for any handle: never in production.
    webApp: (config.WEB_APP ?? !production) ? { devTokenSecret: production ? null : authSecret } : null,
  })
  const url = await server.listen(config.PORT, config.HOST)
  const metricsServer =
    metrics && config.METRICS_PORT ? await listenMetrics(metrics, config.METRICS_PORT, config.HOST) : undefined
  if (metricsServer) opened(async () => metricsServer.close())
  if (metrics)
    log(`Prometheus metrics on ${metricsServer ? `port ${config.METRICS_PORT}` : 'the GraphQL port'}, path /metrics`)
  log(`GraphQL (GraphiQL in a browser, WebSocket on the same path): ${url}`)
  if (config.WEB_APP ?? !production) log(`the chat workbench: ${new URL('/', url).href}`)
  if (config.AUTH_PROVIDER) {
    const { jwksUrl, issuer, audience } = config.AUTH_PROVIDER
    log(`tokens from ${jwksUrl ?? issuer} accepted${authSecret ? ', and HS256 tokens' : ''}`)
    // A provider signs tokens for every application in the realm; only aud tells Parley's apart.
    if (!audience) logger.warn('AUTH_AUDIENCE is not set: tokens the provider issued for any application are accepted')
  }
  if (!production && authSecret) {
    log(`GraphiQL opens with a token for ${DEV_USER} (valid ${DEV_TOKEN_LIFETIME}, a new one on each page load)`)
    log(`a token for ${DEV_USER}: ${await signToken(authSecret, DEV_USER)}`)
  }
  const reminders = startReminderScheduler(app, { log })
  const webhooks = startWebhookWorker(app, { log })
  const push = app.settings.push.gatewayUrl ? startPushWorker(app, { log }) : undefined
  if (push) metrics?.watchPush(push)
  metrics?.watchWebhooks(webhooks)
  const sweeper = startAttachmentSweeper(app, { log })
  const retention = startRetentionSweeper(app, { log })
  const streams = startStreamSweeper(app, { log })

  let stopping = false
  async function shutdown(signal: string) {
    if (stopping) return
    stopping = true
    log(`${signal}: draining connections (at most ${config.SHUTDOWN_GRACE_MS} ms)`)
    // The drain is bounded; should closing a dependency hang after it, the process still ends.
    setTimeout(() => {
      logger.error('shutdown did not finish in time; exiting')
      process.exit(1)
    }, config.SHUTDOWN_GRACE_MS + 10_000).unref()
    await server.close()
    metricsServer?.close()
    await reminders.stop()
    await webhooks.stop()
    await push?.stop()
    await sweeper.stop()
    await retention.stop()
    await streams.stop()
    await realtime.close()
    await replicas?.close()
    await db.$disconnect()
    await tracing?.shutdown()
    await database.stop()
    log('stopped')
    process.exit(0)
  }
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => void shutdown(signal))
}
