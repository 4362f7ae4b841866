import { performance } from 'node:perf_hooks'
import type pg from 'pg'
import { isDatabaseOutage } from './availability.ts'
import { createDb, poolOf, type Db } from './client.ts'

/** What /readyz says of one replica: `ready` serves reads, `lagging` and `down` are skipped. */
export type ReplicaStatus = {
  name: string
  state: 'ready' | 'lagging' | 'down'
  /** How far behind the primary it was at its last poll (one poll interval's precision); null before the first. */
  lagMs: number | null
  reason?: string
}

type Replica = {
  name: string
  db: Db
  pool: pg.Pool
  /** performance.now() of the newest primary position it has replayed: every commit before it is on the replica. */
  caughtUpTo: number
  /** Why it is skipped until a poll succeeds (a failed poll or read); null while it answers. */
  failure: string | null
}

/** A primary WAL position and when it was asked for (performance.now(), before the query was sent). */
type Sample = { at: number; lsn: bigint }
/** A user's writes in flight, and when the last one ended. */
type Writes = { running: number; endedAt: number }

const SAMPLES_KEPT = 64
const POLL_TIMEOUT_MS = 2_000

/** 'X/Y' (pg_lsn as text) as one number. */
const lsnOf = (text: string) => {
  const [high, low] = text.split('/')
  return (BigInt(`0x${high}`) << 32n) + BigInt(`0x${low}`)
}

/**
 * A standby refused the statement, and the primary can answer it: the standby is down or
 * restarting, or replay cancelled the statement (a recovery conflict, 40001, which a retry on the
 * standby may meet again).
 */
const failedOnReplica = (error: unknown) =>
  isDatabaseOutage(error) ||
  (error instanceof Error && /conflict with recovery/.test(error.message)) ||
  (error as { code?: unknown }).code === '40001'

/**
 * Read replicas and which one a viewer's read may use (decision 0288). Every `pollMs` it asks the
 * primary for its WAL position and each replica for the position it has replayed: a replica that has
 * replayed a sampled position holds every commit made before that sample was taken. A viewer's
 * writes are marked in memory when they start and when they end (`writing`, no database work), and
 * a read goes to a replica whose replayed sample is newer than the viewer's last write, is younger
 * than `maxLagMs` and answered its last poll; otherwise to the primary. Replicas are tried from one
 * picked by the user id, so a user's reads stay on one replica while it qualifies.
 */
export class ReplicaRouter {
  private readonly samples: Sample[] = []
  private readonly writes = new Map<number, Writes>()
  private readonly byDb = new Map<Db, Replica>()
  private timer: NodeJS.Timeout | undefined
  private stopped = false
  private polling: Promise<void> = Promise.resolve()

  constructor(
    readonly primary: Db,
    private readonly replicas: readonly Replica[],
    private readonly opts: { maxLagMs: number; pollMs: number; log?: (message: string) => void },
  ) {
    for (const replica of replicas) this.byDb.set(replica.db, replica)
  }

  /** The connection a read of `userId` outside a transaction goes to. */
  readerFor(userId: number): Db {
    const writes = this.writes.get(userId)
    const lastWrite = writes === undefined ? -Infinity : writes.running ? Infinity : writes.endedAt
    const now = performance.now()
    const n = this.replicas.length
    for (let i = 0; i < n; i++) {
      const replica = this.replicas[(userId + i) % n]!
      if (replica.failure === null && replica.caughtUpTo > lastWrite && now - replica.caughtUpTo <= this.opts.maxLagMs)
        return replica.db
    }
    return this.primary
  }

  /** Marks a write of `userId` begun; call the returned function once it has committed or failed. */
  writing(userId: number): () => void {
    let writes = this.writes.get(userId)
    if (!writes) this.writes.set(userId, (writes = { running: 0, endedAt: -Infinity }))
    writes.running++
    return () => {
      if (--writes.running === 0) writes.endedAt = performance.now()
    }
  }

  /**
   * A read on `db` failed: when `db` is a replica and the error is the replica's, it is skipped until
   * a poll finds it answering again, and the primary is the connection to read from; else null.
   */
  fallbackFor(db: Db, error: unknown): Db | null {
    const replica = this.byDb.get(db)
    if (!replica || !failedOnReplica(error)) return null
    // A recovery conflict cancels one statement; the replica itself is fine.
    if (isDatabaseOutage(error)) this.markFailed(replica, error)
    return this.primary
  }

  status(): ReplicaStatus[] {
    const now = performance.now()
    return this.replicas.map((replica) => {
      const lagMs = replica.caughtUpTo === -Infinity ? null : Math.max(0, Math.round(now - replica.caughtUpTo))
      if (replica.failure !== null) return { name: replica.name, state: 'down', lagMs, reason: replica.failure }
      if (lagMs === null || lagMs > this.opts.maxLagMs)
        return { name: replica.name, state: 'lagging', lagMs, reason: `behind by more than ${this.opts.maxLagMs} ms` }
      return { name: replica.name, state: 'ready', lagMs }
    })
  }

  /** Polls now and then every `pollMs` until close(). */
  start(): void {
    const tick = () => {
      this.polling = this.poll().finally(() => {
        if (!this.stopped) this.timer = setTimeout(tick, this.opts.pollMs).unref()
      })
    }
    tick()
  }

  async close(): Promise<void> {
    this.stopped = true
    clearTimeout(this.timer)
    await this.polling
    await Promise.all(this.replicas.map((replica) => replica.db.$disconnect()))
  }

  private async poll(): Promise<void> {
    const at = performance.now()
    try {
      const { rows } = await poolOf(this.primary)!.query<{ lsn: string }>({
        text: 'SELECT pg_current_wal_lsn()::text AS lsn',
        query_timeout: POLL_TIMEOUT_MS,
      } as pg.QueryConfig)
      this.samples.push({ at, lsn: lsnOf(rows[0]!.lsn) })
      if (this.samples.length > SAMPLES_KEPT) this.samples.shift()
    } catch {
      // The primary's outage is DatabaseAvailability's to report; without new samples the replicas
      // only age past maxLagMs.
    }
    await Promise.all(this.replicas.map((replica) => this.pollReplica(replica)))
    // A write older than maxLagMs holds back no replica that may serve.
    for (const [userId, writes] of this.writes)
      if (!writes.running && at - writes.endedAt > this.opts.maxLagMs) this.writes.delete(userId)
  }

  private async pollReplica(replica: Replica): Promise<void> {
    try {
      const { rows } = await replica.pool.query<{ lsn: string | null }>({
        text: 'SELECT pg_last_wal_replay_lsn()::text AS lsn',
        query_timeout: POLL_TIMEOUT_MS,
      } as pg.QueryConfig)
      const replayed = rows[0]!.lsn
      if (replayed === null) return this.markFailed(replica, 'not a standby (it is not in recovery)')
      const lsn = lsnOf(replayed)
      const sample = this.samples.findLast((s) => s.lsn <= lsn)
      if (sample && sample.at > replica.caughtUpTo) replica.caughtUpTo = sample.at
      if (replica.failure !== null) this.opts.log?.(`${replica.name} answers again`)
      replica.failure = null
    } catch (error) {
      this.markFailed(replica, error)
    }
  }

  private markFailed(replica: Replica, error: unknown): void {
    const reason = error instanceof Error ? error.message : String(error)
    if (replica.failure === null) this.opts.log?.(`${replica.name} skipped: ${reason}`)
    replica.failure = reason
  }
}

/** A replica's name in logs and /readyz: its host, port and database, never its credentials. */
function replicaName(url: string, index: number): string {
  try {
    const parsed = new URL(url)
    const host = parsed.searchParams.get('host') ?? parsed.hostname
    return `replica ${index + 1} (${host}${parsed.port ? `:${parsed.port}` : ''}${parsed.pathname})`
  } catch {
    return `replica ${index + 1}`
  }
}

/**
 * The router over a pool (of `poolSize`, as the primary's) per replica URL. A read on a replica that
 * fails as the replica's goes to the primary: store/pooled.ts asks `fallbackFor`, and the replica
 * client's own `$queryRaw` (the reads that do not go through the pool) retries there itself.
 */
export function openReplicas(
  primary: Db,
  urls: readonly string[],
  opts: { maxLagMs: number; pollMs?: number; poolSize?: number; poolTimeoutMs?: number; log?: (m: string) => void },
): ReplicaRouter {
  const replicas = urls.map((url, index): Replica => {
    const db = createDb(url, { poolSize: opts.poolSize, poolTimeoutMs: opts.poolTimeoutMs })
    return { name: replicaName(url, index), db, pool: poolOf(db)!, caughtUpTo: -Infinity, failure: null }
  })
  // Polled several times within maxLagMs, so a replica keeping up is never taken for a lagging one.
  const pollMs = opts.pollMs ?? Math.max(10, Math.min(100, Math.floor(opts.maxLagMs / 4)))
  const router = new ReplicaRouter(primary, replicas, { maxLagMs: opts.maxLagMs, pollMs, log: opts.log })
  for (const { db, pool } of replicas) {
    routers.set(db, router)
    retryRawReadsOnPrimary(db, router)
    // An idle connection the replica dropped (it stopped or restarted): skipped until a poll finds it again.
    pool.on('error', (error) => router.fallbackFor(db, error))
  }
  return router
}

const routers = new WeakMap<Db, ReplicaRouter>()

/** Where a read that failed on `db` goes instead: the primary when `db` is a replica and the failure its own (store/pooled.ts). */
export const replicaFallback = (db: Db, error: unknown): Db | null => routers.get(db)?.fallbackFor(db, error) ?? null

type RawRead = (...args: unknown[]) => Promise<unknown>

function retryRawReadsOnPrimary(db: Db, router: ReplicaRouter): void {
  for (const method of ['$queryRaw', '$queryRawUnsafe'] as const) {
    const onReplica = (db[method] as RawRead).bind(db)
    const onPrimary = (router.primary[method] as RawRead).bind(router.primary)
    ;(db as unknown as Record<string, RawRead>)[method] = (...args) =>
      onReplica(...args).catch((error: unknown) => {
        if (!router.fallbackFor(db, error)) throw error
        return onPrimary(...args)
      })
  }
}
