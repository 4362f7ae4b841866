import { createHash } from 'node:crypto'
import { PrismaPg } from '@prisma/adapter-pg'
import pg from 'pg'
import { PrismaClient } from '../generated/prisma/client.ts'

export type Db = PrismaClient
/** An interactive transaction client: what every store function takes. */
export type Tx = Parameters<Parameters<PrismaClient['$transaction']>[0]>[0]

/**
 * Marks a statement PostgreSQL must plan on every call (see store/sql.ts `plannedPerCall`): it goes
 * unnamed, so no generic plan is kept for it.
 */
export const PLANNED_PER_CALL = '/* planned per call */'

const statementNames = new Map<string, string>()

/**
 * The name of a SQL text, so pg prepares it once per connection and PostgreSQL can keep its plan:
 * the visibility predicates make planning cost more than running a history page. Statements sent
 * through Prisma and straight through the pool (store/changes.ts) are named alike. A statement
 * marked PLANNED_PER_CALL gets no name ('' is pg's unnamed statement).
 */
export function statementName(sql: string): string {
  if (sql.startsWith(PLANNED_PER_CALL)) return ''
  let name = statementNames.get(sql)
  if (!name) {
    name = `p_${createHash('sha1').update(sql).digest('base64url').slice(0, 22)}`
    if (statementNames.size < 10_000) statementNames.set(sql, name)
  }
  return name
}

/**
 * pg-pool's errors when no connection was had within connectionTimeoutMillis: none came free, or a new
 * one did not connect in time (Prisma passes both through as they are).
 */
const POOL_TIMEOUT_MESSAGES = new Set([
  'timeout exceeded when trying to connect',
  'Connection terminated due to connection timeout',
])
/** The request gave up waiting for a pooled connection. */
export const isPoolTimeout = (error: unknown): boolean =>
  error instanceof Error && POOL_TIMEOUT_MESSAGES.has(error.message)

/** Each client's pg pool, for the pool size/idle/waiting metrics. */
const pools = new WeakMap<Db, pg.Pool>()
export const poolOf = (db: Db): pg.Pool | undefined => pools.get(db)
/** Each client's `onQuery`, for statements sent straight through its pool (store/pooled.ts). */
const queryLogs = new WeakMap<Db, (sql: string) => void>()
export const queryLogOf = (db: Db): ((sql: string) => void) | undefined => queryLogs.get(db)

/**
 * A Prisma client on a pg pool of `poolSize`; a query waits at most `poolTimeoutMs` for a free
 * connection, then fails (isPoolTimeout), so no request waits forever on an exhausted pool.
 */
export function createDb(
  databaseUrl: string,
  opts: { poolSize?: number; poolTimeoutMs?: number; onQuery?: (sql: string) => void } = {},
): Db {
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: opts.poolSize ?? 20,
    connectionTimeoutMillis: opts.poolTimeoutMs ?? 10_000,
    // A connection's kept (generic) plans were made from the statistics of when it prepared them; a
    // new connection every 10 minutes plans again from today's, as tables grow from empty.
    maxLifetimeSeconds: 600,
    // Idle connections stay open (pg closes them after 10 s by default): otherwise the first burst
    // after a pause opens them all again at once, and each new backend loads its catalog caches and
    // plans its statements again, which held a burst of 32 sends up to half a second (decision 0266).
    idleTimeoutMillis: 0,
    // No JIT compilation: Parley's statements are short, and a plan whose estimate passes
    // jit_above_cost (a viewer's unreadTotal over 10,000 conversations) spent about 40 ms compiling
    // to save nothing (decision 0263). No Memoize: Parley's lookups per id never repeat a key, and
    // the caches generic plans put over them cost a third of that unreadTotal (decision 0265). A
    // DATABASE_URL that sets `options` itself takes precedence.
    options: '-c jit=off -c enable_memoize=off',
  })
  const adapter = new PrismaPg(pool, {
    statementNameGenerator: ({ sql }) => statementName(sql),
    disposeExternalPool: true,
  })
  const db = new PrismaClient({
    adapter,
    // The defaults (wait 2 s, run 5 s) are too tight when many sends queue on one conversation row.
    transactionOptions: { maxWait: 15_000, timeout: 30_000 },
    log: opts.onQuery ? [{ emit: 'event', level: 'query' }] : [],
  })
  if (opts.onQuery) {
    const onQuery = opts.onQuery
    queryLogs.set(db, onQuery)
    ;(db as unknown as { $on(e: 'query', cb: (ev: { query: string }) => void): void }).$on('query', (ev) =>
      onQuery(ev.query),
    )
  }
  pools.set(db, pool)
  return db
}
