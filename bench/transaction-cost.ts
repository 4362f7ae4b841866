// Scenario 10's second figure, in its own process with NODE_ENV=production as the server runs (Prisma
// records call sites outside production): the CPU of a send-shaped transaction (BEGIN, a row locked
// FOR UPDATE, one more statement, COMMIT) through Prisma's interactive transaction and `$queryRaw`,
// as every send batch runs, against the same statements on a pg client, and the two statements
// through Prisma outside a transaction. Prints the medians as one JSON line.
import { createDb, poolOf } from '../src/db/client.ts'
import { Prisma } from '../src/store/sql.ts'
import { alternatingMedians } from './measure.ts'

const TRANSACTIONS = 2_000
const RUNS = 5

const db = createDb(process.argv[2]!, { poolSize: 2 })
const pool = poolOf(db)!
const lock = Prisma.sql`SELECT n FROM bench_counter WHERE id = 1 FOR UPDATE`
const bump = Prisma.sql`UPDATE bench_counter SET n = n + 1 WHERE id = 1 RETURNING n`

async function throughPg(): Promise<void> {
  const client = await pool.connect()
  try {
    for (const text of ['BEGIN', lock.text, bump.text, 'COMMIT']) await client.query(text)
  } finally {
    client.release()
  }
}

const variants = [
  () =>
    db.$transaction(async (tx) => {
      await tx.$queryRaw(lock)
      await tx.$queryRaw(bump)
    }),
  throughPg,
  async () => {
    await db.$queryRaw(lock)
    await db.$queryRaw(bump)
  },
]

/** Process CPU (every thread, as /proc counts the server's) per call of `run`, in µs. */
const cpuPerCall = (run: () => Promise<unknown>) => async () => {
  const before = process.cpuUsage()
  for (let i = 0; i < TRANSACTIONS; i++) await run()
  const used = process.cpuUsage(before)
  return (used.user + used.system) / TRANSACTIONS
}

const [prisma, pg, prismaStatements] = await alternatingMedians(RUNS, variants.map(cpuPerCall))
console.log(JSON.stringify({ prisma, pg, prismaStatements }))
await db.$disconnect()
