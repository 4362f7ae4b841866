import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client'
import type pg from 'pg'
import type { WebSocket } from 'ws'
import { poolOf } from '../db/client.ts'
import type { Parley } from '../app.ts'
import type { WebhookWorker } from '../domain/webhooks/index.ts'
import type { PushWorker } from '../domain/push/index.ts'
import type { RealtimeEvent } from '../realtime/events.ts'
import type { Realtime } from '../realtime/pubsub.ts'
import type { RedisObserver } from '../realtime/redis.ts'
import { createMediaMetrics } from './mediaMetrics.ts'

/** Distinct operation-name label values kept; names past the cap count as "other" (clients choose names). */
const OPERATION_LABEL_CAP = 200

/** Every Parley metric, on its own registry (one per server, so tests in one process do not collide). */
export function createMetrics() {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
  const registers = [registry]
  const pools = new Set<pg.Pool>()
  const poolGauge = (name: string, help: string, read: (pool: pg.Pool) => number) =>
    new Gauge({
      name,
      help,
      registers,
      collect() {
        let total = 0
        for (const pool of pools) total += read(pool)
        this.set(total)
      },
    })
  const seenOperations = new Set<string>()
  const webhookWorkers = new Set<WebhookWorker>()
  const media = createMediaMetrics(registers)
  const metrics = {
    registry,
    requests: new Counter({
      name: 'parley_http_requests_total',
      help: 'GraphQL HTTP requests by operation name and status code',
      labelNames: ['operation', 'status'],
      registers,
    }),
    errors: new Counter({
      name: 'parley_graphql_errors_total',
      help: 'GraphQL errors answered, by extensions.code',
      labelNames: ['code'],
      registers,
    }),
    resyncRequired: new Counter({
      name: 'parley_resync_required_total',
      help: 'Subscriptions refused or ended with RESYNC_REQUIRED',
      registers,
    }),
    replayedEvents: new Counter({
      name: 'parley_replayed_events_total',
      help: 'Changes replayed from the database to resuming subscriptions (sincePts)',
      registers,
    }),
    slowConsumerDrops: new Counter({
      name: 'parley_slow_consumer_drops_total',
      help: 'Subscriptions ended because their queue overflowed (the client read too slowly)',
      registers,
    }),
    sendDuration: new Histogram({
      name: 'parley_send_message_duration_seconds',
      help: 'sendMessage mutation execution time',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    }),
    sendBatchSize: new Histogram({
      name: 'parley_send_batch_size',
      help: 'Sends committed together in one coalesced transaction',
      buckets: [1, 2, 4, 8, 16, 32, 64, 100],
      registers,
    }),
    webSockets: new Gauge({ name: 'parley_websockets_open', help: 'Open WebSocket connections', registers }),
    subscriptions: new Gauge({
      name: 'parley_subscriptions_open',
      help: 'Open GraphQL subscriptions by root field',
      labelNames: ['field'],
      registers,
    }),
    eventsPublished: new Counter({
      name: 'parley_realtime_events_published_total',
      help: 'Realtime events published after commit, by type (reminderDue = reminders fired)',
      labelNames: ['type'],
      registers,
    }),
    redisPublished: new Counter({
      name: 'parley_redis_published_total',
      help: 'Redis PUBLISH commands sent',
      registers,
    }),
    redisPublishFailures: new Counter({
      name: 'parley_redis_publish_failures_total',
      help: 'Redis PUBLISH commands that failed',
      registers,
    }),
    redisReceived: new Counter({
      name: 'parley_redis_received_total',
      help: 'Redis pub/sub messages received',
      registers,
    }),
    redisReconnects: new Counter({
      name: 'parley_redis_reconnects_total',
      help: 'Redis connections re-established after a drop',
      registers,
    }),
    webhookDeliveries: new Counter({
      name: 'parley_webhook_attempts_total',
      help: 'Webhook delivery attempts by outcome (delivered, retry, failed)',
      labelNames: ['outcome'],
      registers,
    }),
    webhookAttemptSeconds: new Histogram({
      name: 'parley_webhook_attempt_duration_seconds',
      help: 'Webhook delivery attempts, from request to recorded outcome',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
    pushNotifications: new Counter({
      name: 'parley_push_notifications_total',
      help: 'Push notifications the gateway accepted',
      registers,
    }),
    pushJobFailures: new Counter({
      name: 'parley_push_job_failures_total',
      help: 'Push job attempts that failed (the gateway answered other than 2xx, or not in time) and will be retried',
      registers,
    }),
    pushTokensRemoved: new Counter({
      name: 'parley_push_tokens_removed_total',
      help: 'Push devices removed because the gateway reported their token invalid or unregistered',
      registers,
    }),
    pushGatewaySeconds: new Histogram({
      name: 'parley_push_gateway_request_duration_seconds',
      help: 'Push gateway requests (at most 100 notifications each), from request to answer',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
    webhookOldestPending: new Gauge({
      name: 'parley_webhook_oldest_pending_seconds',
      help: 'Age of the oldest PENDING webhook delivery (as this instance reads the shared outbox)',
      registers,
      async collect() {
        // A database that is away fails the webhooks' own reads, not the whole scrape.
        for (const worker of webhookWorkers) this.set(await worker.oldestPendingAgeSeconds().catch(() => NaN))
      },
    }),
    poolSize: poolGauge(
      'parley_db_pool_connections',
      'PostgreSQL pool connections (busy and idle)',
      (p) => p.totalCount,
    ),
    poolIdle: poolGauge('parley_db_pool_idle', 'PostgreSQL pool idle connections', (p) => p.idleCount),
    poolWaiting: poolGauge(
      'parley_db_pool_waiting',
      'Queries waiting for a PostgreSQL pool connection',
      (p) => p.waitingCount,
    ),

    /** The label for a client-chosen operation name: bounded, so clients cannot grow the series without end. */
    operationLabel(name: string | null | undefined): string {
      if (!name) return 'anonymous'
      if (seenOperations.has(name)) return name
      if (seenOperations.size >= OPERATION_LABEL_CAP) return 'other'
      seenOperations.add(name)
      return name
    },
    countError(code: unknown): void {
      const label = typeof code === 'string' ? code : 'INTERNAL_SERVER_ERROR'
      metrics.errors.inc({ code: label })
      if (label === 'RESYNC_REQUIRED') metrics.resyncRequired.inc()
    },
    /** Counts this app's sends, live delivery and pool through the observers the domain offers. */
    bindApp(app: Parley): void {
      app.sends.observer = { committed: (size) => metrics.sendBatchSize.observe(size) }
      app.hub.observer = {
        replayed: (events) => metrics.replayedEvents.inc(events),
        slowConsumerDropped: () => metrics.slowConsumerDrops.inc(),
      }
      const pool = poolOf(app.db)
      if (pool) pools.add(pool)
      media.bind(app)
    },
    /** Counts the worker's attempts and reads its oldest pending age on each scrape. */
    watchWebhooks(worker: WebhookWorker): void {
      webhookWorkers.add(worker)
      worker.observer = {
        attempted(outcome, seconds) {
          metrics.webhookDeliveries.inc({ outcome })
          metrics.webhookAttemptSeconds.observe(seconds)
        },
      }
    },
    watchPush(worker: PushWorker): void {
      worker.observer = {
        sent: (notifications) => metrics.pushNotifications.inc(notifications),
        failed: () => metrics.pushJobFailures.inc(),
        tokensRemoved: (count) => metrics.pushTokensRemoved.inc(count),
        gatewaySeconds: (seconds) => metrics.pushGatewaySeconds.observe(seconds),
      }
    },
    trackWebSocket(socket: WebSocket): void {
      metrics.webSockets.inc()
      socket.once('close', () => metrics.webSockets.dec())
    },
    redis: {
      published: () => metrics.redisPublished.inc(),
      publishFailed: () => metrics.redisPublishFailures.inc(),
      received: () => metrics.redisReceived.inc(),
      reconnecting: () => metrics.redisReconnects.inc(),
    } satisfies RedisObserver,
    /** The bus with its publishes counted by event type. */
    countPublishes(realtime: Realtime): Realtime {
      return {
        ...realtime,
        publish(events: readonly RealtimeEvent[]) {
          for (const event of events) metrics.eventsPublished.inc({ type: event.type })
          return realtime.publish(events)
        },
      }
    },
    /** Serves the Prometheus text format. */
    async serve(_req: IncomingMessage, res: ServerResponse): Promise<void> {
      const body = await registry.metrics()
      res.writeHead(200, { 'content-type': registry.contentType })
      res.end(body)
    },
  }
  return metrics
}

export type Metrics = ReturnType<typeof createMetrics>

/** A listener of its own for /metrics (METRICS_PORT), so scrapes need not pass the public port. */
export function listenMetrics(metrics: Metrics, port: number, host?: string): Promise<Server> {
  const server = createServer((req, res) => {
    if (req.url?.split('?')[0] === '/metrics') return void metrics.serve(req, res)
    res.writeHead(404).end()
  })
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => resolve(server))
  })
}
