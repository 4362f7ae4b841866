import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import type pg from 'pg'
import type { GraphQLCall, LoadClient } from './client.ts'

const CLOCK_TICKS = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim())

/** CPU seconds (user + system) process `pid` has used so far; 0 once it has exited. */
export function processCpuSeconds(pid: number): number {
  let text: string
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8')
  } catch {
    return 0
  }
  // utime and stime: fields 14 and 15 of /proc/<pid>/stat, 12 and 13 after the command name (which ends at the last ')').
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS
}

/** The CPU seconds each backend of `database` has used so far (PostgreSQL on this machine; not the asking connection). */
async function backendCpu(connection: pg.Client, database: string): Promise<Map<number, number>> {
  const { rows } = await connection.query<{ pid: number }>(
    'SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
    [database],
  )
  return new Map(rows.map(({ pid }) => [pid, processCpuSeconds(pid)]))
}

/**
 * The database's CPU seconds during `run`: its backends' CPU after, less before (a backend that
 * started meanwhile counts from zero). Reads /proc, so PostgreSQL must run on this machine, as the
 * bench's embedded server or BENCH_DATABASE_URL's local socket does.
 */
export async function withDatabaseCpu<T>(
  connection: pg.Client,
  database: string,
  run: () => Promise<T>,
): Promise<{ result: T; databaseSeconds: number }> {
  const before = await backendCpu(connection, database)
  const result = await run()
  const after = await backendCpu(connection, database)
  let databaseSeconds = 0
  for (const [pid, seconds] of after) databaseSeconds += seconds - (before.get(pid) ?? 0)
  return { result, databaseSeconds }
}

/**
 * A measurement (for pairedMedians and the like): the CPU µs per call `server` uses while the load
 * client runs `calls` against it at concurrency 8.
 */
export const serverCpuPerCall =
  (client: LoadClient, server: { endpoint: string; cpuSeconds(): number }, calls: GraphQLCall[]) =>
  async (): Promise<number> => {
    const before = server.cpuSeconds()
    await client.throughput({ endpoint: server.endpoint, concurrency: 8, calls })
    return ((server.cpuSeconds() - before) * 1e6) / calls.length
  }
