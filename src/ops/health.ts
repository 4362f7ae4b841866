import { readdirSync } from 'node:fs'
import type { IncomingMessage, ServerResponse } from 'node:http'
import path from 'node:path'
import type { DatabaseAvailability } from '../db/availability.ts'
import type { Db } from '../db/client.ts'
import type { ReplicaStatus } from '../db/replicas.ts'
import { PROJECT_ROOT } from '../lib/projectRoot.ts'
import type { RedisRealtime } from '../realtime/redis.ts'

/** One dependency /readyz asks about; resolves with why it is not ready, or null when it is. */
export type ReadinessCheck = { name: string; check(): Promise<string | null> }

const MIGRATIONS_DIR = path.join(PROJECT_ROOT, 'prisma', 'migrations')

/** The migration folders this build ships: what the database must have applied. */
function shippedMigrations(dir = MIGRATIONS_DIR): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
}

/**
 * The database answers a trivial query and has applied every shipped migration without failure.
 * Once the migrations are seen applied they stay applied, so only the cheap query runs after that.
 * During an outage the requests have seen (`availability`), it answers at once with since when, and
 * an outage this check meets first starts the same outage state.
 */
export function databaseReadiness(
  db: Db,
  opts: { availability?: DatabaseAvailability; migrationsDir?: string } = {},
): ReadinessCheck {
  const expected = shippedMigrations(opts.migrationsDir)
  let migrated = false
  const check = async () => {
    if (migrated) {
      await db.$queryRaw`SELECT 1`
      return null
    }
    const rows = await db.$queryRaw<
      { migration_name: string; finished_at: Date | null; rolled_back_at: Date | null }[]
    >`
      SELECT migration_name, finished_at, rolled_back_at FROM _prisma_migrations`
    const applied = new Set(rows.filter((r) => r.finished_at && !r.rolled_back_at).map((r) => r.migration_name))
    const failed = rows.filter((r) => !r.finished_at && !r.rolled_back_at).map((r) => r.migration_name)
    if (failed.length) return `failed or unfinished migrations: ${failed.join(', ')}`
    const pending = expected.filter((name) => !applied.has(name))
    if (pending.length) return `pending migrations: ${pending.join(', ')}`
    migrated = true
    return null
  }
  return {
    name: 'database',
    async check() {
      const { availability } = opts
      const state = availability?.state
      if (state && !state.available) return `unavailable since ${state.since.toISOString()} (${state.reason})`
      try {
        return await check()
      } catch (error) {
        availability?.refuseIfOutage(error)
        throw error
      }
    },
  }
}

/** Both Redis connections (publish and subscribe) are up. */
export const redisReadiness = (redis: RedisRealtime): ReadinessCheck => ({
  name: 'redis',
  check: async () => (redis.connected() ? null : 'not connected'),
})

export type Health = {
  /** Answers /healthz and /readyz; false for any other path (the caller serves it). */
  handle(req: IncomingMessage, res: ServerResponse): boolean
  /** From now on /readyz answers 503, so balancers stop routing here before the drain. */
  stopAccepting(): void
}

const READINESS_TIMEOUT_MS = 2_000

async function runCheck({ name, check }: ReadinessCheck): Promise<[string, string | null]> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<string>(
    (resolve) => (timer = setTimeout(() => resolve(`no answer in ${READINESS_TIMEOUT_MS} ms`), READINESS_TIMEOUT_MS)),
  )
  try {
    return [name, await Promise.race([check(), timeout])]
  } catch (error) {
    return [name, error instanceof Error ? error.message : String(error)]
  } finally {
    clearTimeout(timer)
  }
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' })
  res.end(JSON.stringify(body))
}

/**
 * /healthz and /readyz over `checks`. `replicas` (read replicas) are reported in /readyz's body,
 * each ready, lagging or down, but never make it fail: their reads go to the primary meanwhile.
 */
export function createHealth(checks: ReadinessCheck[], replicas?: { status(): ReplicaStatus[] }): Health {
  let stopping = false
  return {
    handle(req, res) {
      const pathname = req.url?.split('?')[0]
      if (pathname === '/healthz') {
        reply(res, 200, { status: 'ok' })
        return true
      }
      if (pathname !== '/readyz') return false
      if (stopping) {
        reply(res, 503, { status: 'stopping' })
        return true
      }
      void Promise.all(checks.map(runCheck)).then((results) => {
        const failing = Object.fromEntries(results.filter(([, problem]) => problem !== null))
        const reported = replicas ? { replicas: replicas.status() } : {}
        // Shutdown may have begun while the checks ran.
        if (stopping) reply(res, 503, { status: 'stopping' })
        else if (Object.keys(failing).length) reply(res, 503, { status: 'unavailable', checks: failing, ...reported })
        else reply(res, 200, { status: 'ready', ...reported })
      })
      return true
    },
    stopAccepting() {
      stopping = true
    },
  }
}
