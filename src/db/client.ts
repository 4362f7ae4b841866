import { PrismaPg } from '@prisma/adapter-pg'
import { PrismaClient } from '../generated/prisma/client.ts'

export type Db = PrismaClient
/** An interactive transaction client: what every store function takes. */
export type Tx = Parameters<Parameters<PrismaClient['$transaction']>[0]>[0]

export function createDb(databaseUrl: string, opts: { poolSize?: number; onQuery?: (sql: string) => void } = {}): Db {
  const adapter = new PrismaPg({ connectionString: databaseUrl, max: opts.poolSize ?? 20 })
  const db = new PrismaClient({
    adapter,
    // The defaults (wait 2 s, run 5 s) are too tight when many sends queue on one conversation row.
    transactionOptions: { maxWait: 15_000, timeout: 30_000 },
    log: opts.onQuery ? [{ emit: 'event', level: 'query' }] : [],
  })
  if (opts.onQuery) {
    const onQuery = opts.onQuery
    ;(db as unknown as { $on(e: 'query', cb: (ev: { query: string }) => void): void }).$on('query', (ev) => onQuery(ev.query))
  }
  return db
}
