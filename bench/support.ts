import os from 'node:os'
import { existsSync, rmSync } from 'node:fs'
import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import path from 'node:path'
import pg from 'pg'
import { signToken } from '../src/http/auth/hs256.ts'
import { createDb, type Db } from '../src/db/client.ts'
import { embeddedParent, startEmbeddedPostgres } from '../src/db/embedded.ts'
import { migrateDeploy } from '../src/db/migrate.ts'
import { withPgClient } from '../src/db/pg.ts'
import type { Parley } from '../src/app.ts'
import { createApp } from '../src/app.ts'
import { DEFAULT_SETTINGS } from '../src/domain/core/settings.ts'
import { createRealtime } from '../src/realtime/pubsub.ts'
import { createParleyServer, type ParleyServer } from '../src/http/server.ts'

export const AUTH_SECRET = 'bench-secret-that-is-long-enough-for-hs256'

/** Where benchmark databases live: BENCH_DATABASE_URL (a server; a database per scenario), else embedded. */
export type DatabaseHost = { adminUrl: string; version: string; stop(): Promise<void> }

export async function openDatabaseHost(): Promise<DatabaseHost> {
  let adminUrl = process.env.BENCH_DATABASE_URL
  let stop = async () => {}
  if (!adminUrl) {
    const dir = path.join(embeddedParent('parley-bench-'), 'pg')
    const db = await startEmbeddedPostgres({
      dir,
      port: 57000 + Math.floor(Math.random() * 2000),
      database: 'postgres',
      persistent: false,
    })
    adminUrl = db.url
    stop = async () => {
      await db.stop()
      rmSync(path.dirname(dir), { recursive: true, force: true })
    }
  }
  const { rows } = await withPgClient(adminUrl, (client) => client.query('SHOW server_version'))
  return { adminUrl, version: rows[0].server_version, stop }
}

/**
 * A fresh, migrated database for one scenario. With `keep`, one named after the scenario alone that
 * outlives the run and is migrated, not recreated, when it exists (a fixture too slow to rebuild).
 */
export async function createScenarioDatabase(
  host: DatabaseHost,
  name: string,
  opts: { keep?: boolean } = {},
): Promise<{ url: string; drop(): Promise<void> }> {
  const admin = new pg.Client({ connectionString: host.adminUrl })
  await admin.connect()
  const db = opts.keep ? `parley_bench_${name}` : `parley_bench_${name}_${process.pid}`
  const { rowCount } = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [db])
  if (!opts.keep || !rowCount) {
    await admin.query(`DROP DATABASE IF EXISTS "${db}" WITH (FORCE)`)
    await admin.query(`CREATE DATABASE "${db}"`)
  }
  const url = new URL(host.adminUrl)
  url.pathname = `/${db}`
  migrateDeploy(url.toString())
  return {
    url: url.toString(),
    drop: async () => {
      if (!opts.keep) await admin.query(`DROP DATABASE IF EXISTS "${db}" WITH (FORCE)`)
      await admin.end()
    },
  }
}

/**
 * A fixture database that `build` fills once. With BENCH_REUSE_FIXTURES=1 (and BENCH_DATABASE_URL) it is
 * kept after the run, under `name`, and the next run reuses it; its `bench_fixture` row (what `build`
 * returned) is written last, so a build that did not finish is thrown away and redone.
 */
export async function openFixture<T>(
  host: DatabaseHost,
  name: string,
  build: (url: string) => Promise<T>,
): Promise<{ fixture: T; url: string; drop(): Promise<void> }> {
  const keep = process.env.BENCH_REUSE_FIXTURES === '1'
  const database = await createScenarioDatabase(host, name, { keep })
  if (keep) {
    const built = await withPgClient(database.url, async (client) => {
      const { rows } = await client.query('SELECT value FROM bench_fixture').catch(() => ({ rows: [] }))
      if (rows[0]) return rows[0].value as T
      await client.query('DROP SCHEMA public CASCADE; CREATE SCHEMA public')
      return null
    })
    if (built !== null) return { fixture: built, ...database }
    migrateDeploy(database.url)
  }
  const fixture = await build(database.url)
  await withPgClient(database.url, (client) =>
    client.query('CREATE TABLE bench_fixture AS SELECT $1::jsonb AS value', [JSON.stringify(fixture)]),
  )
  return { fixture, ...database }
}

/**
 * A Parley server inside the bench process, for what only in-process access can do: count SQL
 * statements, switch a setting between two sends. Timed figures use server-process.ts instead.
 */
export async function startParley(
  url: string,
  poolSize = 40,
  opts: { countStatements?: boolean } = {},
): Promise<{
  app: Parley
  db: Db
  server: ParleyServer
  endpoint: string
  statements: { count: number }
  close(): Promise<void>
}> {
  const statements = { count: 0 }
  // Prisma's query log costs time on every statement: only scenarios that count statements turn it on.
  const db = createDb(url, { poolSize, onQuery: opts.countStatements ? () => void statements.count++ : undefined })
  const app = createApp({ db, realtime: createRealtime(), settings: structuredClone(DEFAULT_SETTINGS) })
  const server = createParleyServer({ app, authSecret: AUTH_SECRET, maxBodyBytes: 1_000_000, production: true })
  const endpoint = await server.listen(0, '127.0.0.1')
  return {
    app,
    db,
    server,
    endpoint: endpoint.replace('localhost', '127.0.0.1'),
    statements,
    close: async () => {
      await server.close()
      await app.realtime.close()
      await db.$disconnect()
    },
  }
}

export const tokenFor = (handle: string) => signToken(AUTH_SECRET, handle)

/**
 * Runs `work` on a pg pool of its own (up to `max` connections, opened as it needs them), then closes
 * the pool and waits until its backends have exited. A pool left to close its idle connections
 * later ended 32 backends at once inside whatever was measured next, and stalled every request of it
 * for 50–100 ms (decision 0267). Reads /proc, as bench/cpu.ts does: the database runs here.
 */
export async function withSettledPool<T>(url: string, max: number, work: (pool: pg.Pool) => Promise<T>): Promise<T> {
  const name = `parley-bench-${randomUUID().slice(0, 8)}`
  const pool = new pg.Pool({ connectionString: url, max, application_name: name })
  // pool.end() resolves before its sockets close; a DROP … WITH (FORCE) may then end one, which an
  // idle client reports as an error that would otherwise crash the run.
  pool.on('error', () => {})
  let pids: number[] = []
  try {
    const result = await work(pool)
    pids = (
      await pool.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE application_name = $1', [name])
    ).rows.map((r) => r.pid)
    return result
  } finally {
    await pool.end()
    for (const deadline = Date.now() + 5_000; Date.now() < deadline && pids.some((pid) => existsSync(`/proc/${pid}`));)
      await sleep(5)
  }
}

export const machine = () => ({
  cores: os.cpus().length,
  cpu: os.cpus()[0]?.model ?? 'unknown',
  memoryGiB: Math.round(os.totalmem() / 2 ** 30),
  node: process.version,
})

/** One line of the results table. */
export type Figure = {
  scenario: string
  metric: string
  value: string
  baseline: string
  ratio: number
  target: string
  met: boolean
  note?: string
}
