import { execFile } from 'node:child_process'
import path from 'node:path'
import { promisify } from 'node:util'
import { serverCpuPerCall } from '../cpu.ts'
import type { LoadClient } from '../client.ts'
import { pairedMedians } from '../measure.ts'
import { startBareServer, startParleyProcess } from '../server-process.ts'
import { withClient } from '../setup.ts'
import { createScenarioDatabase, tokenFor, type DatabaseHost, type Figure } from '../support.ts'

const BENCH = path.resolve(import.meta.dirname, '..')
const REQUESTS = 5_000
const RUNS = 5

/**
 * Scenario 10: what the stack costs before Parley's own work, the floor under the HTTP and send
 * figures. Server CPU per `{ __typename }` request of npm start's server (HTTP, Yoga and its
 * plugins, the token, the context) against a bare node:http process answering the same request,
 * in alternating rounds from the same load client; and the CPU of a send-shaped transaction through
 * Prisma's interactive transaction against the same statements on a pg client (bench/transaction-cost.ts).
 */
export async function stack(host: DatabaseHost, client: LoadClient): Promise<Figure[]> {
  const database = await createScenarioDatabase(host, 'stack')
  const parley = await startParleyProcess(database.url)
  const bare = await startBareServer('bare-http.ts')
  try {
    const token = await tokenFor('stack-0')
    const calls = Array.from({ length: REQUESTS }, () => ({ token, query: '{ __typename }' }))
    const [bareCpu, parleyCpu] = await pairedMedians(
      RUNS,
      serverCpuPerCall(client, bare, calls),
      serverCpuPerCall(client, parley, calls),
    )
    await withClient(database.url, (pg) =>
      pg.query(
        'CREATE TABLE bench_counter (id int PRIMARY KEY, n bigint NOT NULL); INSERT INTO bench_counter VALUES (1, 0)',
      ),
    )
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', path.join(BENCH, 'transaction-cost.ts'), database.url],
      {
        env: { ...process.env, NODE_ENV: 'production' },
      },
    )
    const transaction = JSON.parse(stdout) as { prisma: number; pg: number; prismaStatements: number }
    return [
      {
        scenario: '10 server CPU per `{ __typename }` request (npm start, HTTP, concurrency 8)',
        metric: 'CPU µs/request',
        value: parleyCpu.toFixed(0),
        baseline: `${bareCpu.toFixed(0)} (bare node:http answering the same request)`,
        ratio: parleyCpu / bareCpu,
        target: 'reported',
        met: true,
      },
      {
        scenario:
          '10 CPU per send-shaped transaction (BEGIN, a row FOR UPDATE, an UPDATE, COMMIT), Prisma interactive transaction',
        metric: 'CPU µs/transaction',
        value: transaction.prisma.toFixed(0),
        baseline: `${transaction.pg.toFixed(0)} (the same statements on a pg client)`,
        ratio: transaction.prisma / transaction.pg,
        target: 'reported',
        met: true,
        note: `the two statements through Prisma's $queryRaw without a transaction: ${transaction.prismaStatements.toFixed(0)} µs`,
      },
    ]
  } finally {
    bare.close()
    await parley.close()
    await database.drop()
  }
}
