import pg from 'pg'
import type { GraphQLCall, LoadClient } from '../client.ts'
import { processCpuSeconds, withDatabaseCpu } from '../cpu.ts'
import { alternatingSamples, median, throughput } from '../measure.ts'
import type { ParleyProcess } from '../server-process.ts'

import type { Figure } from '../support.ts'

/** A server answering a history page (bench/bare-history.ts, PostGraphile): its endpoint and CPU. */
type Server = Pick<ParleyProcess, 'endpoint' | 'pid' | 'cpuSeconds'>

/** Another server's history page, measured in the same rounds as Parley's and the raw page. */
export type OtherServer = {
  server: Server
  call: GraphQLCall
  /** Its response's rows as `seq handle text`, newest first, as the raw page returns them. */
  rows(data: unknown): string[]
}

export const CONCURRENCY = 8
const RUNS = 5
// Calls per round, so that a round of each side lasts a few seconds.
const PARLEY_PAGES = 3_000
const RAW_PAGES = 15_000

/** The page a history query returns, as the raw baseline returns it: newest first from the cursor, with the sender's handle. */
const RAW_PAGE = `SELECT m.seq, m.content->>'text' AS text, u.handle
  FROM messages m LEFT JOIN users u ON u.id = m.sender_id
  WHERE m.conversation_id = $1 AND m.seq < $2 ORDER BY m.seq DESC LIMIT $3`

type Edge = { node: { seq: number; sender: { handle: string } | null; content: { text: string } | null } }
type RawRow = { seq: string; text: string; handle: string }

/** The rows of the README's history query's response (oldest first in a `last:` page), newest first. */
export const parleyPageRows = (data: unknown): string[] =>
  (data as { conversation: { messages: { edges: Edge[] } } }).conversation.messages.edges
    .map((e) => `${e.node.seq} ${e.node.sender?.handle} ${e.node.content?.text}`)
    .reverse()

/** CPU microseconds per page of each process a round ran on (the machine's 2 cores are shared by all). */
export type CpuPerPage = Record<string, number>

const medianSplit = (rounds: CpuPerPage[]): CpuPerPage =>
  Object.fromEntries(Object.keys(rounds[0]!).map((k) => [k, median(rounds.map((r) => r[k]!))]))
const total = (split: CpuPerPage) => Object.values(split).reduce((a, b) => a + b, 0)
export const described = (split: CpuPerPage) =>
  Object.entries(split)
    .map(([k, v]) => `${k} ${v.toFixed(0)}`)
    .join(', ')

/**
 * Pages per second of one history page through Parley's HTTP API, `concurrency` clients over
 * keep-alive, against the same page as raw keyset SQL through `pg` at the same concurrency (one
 * named statement: the page and its senders' handles), and through each of `others` from the same
 * load client, in alternating rounds (every second round in reverse order, so no side always runs
 * right after another). Before timing, every side must return the raw page's rows. Also what a page
 * costs the machine, per process, on every side: a server, its database backends and the load
 * client, against the raw page's backends and `pg` client (this process), from /proc during the
 * same rounds.
 */
export async function historyThroughput(opts: {
  client: LoadClient
  server: ParleyProcess
  call: GraphQLCall
  databaseUrl: string
  conversationId: number
  beforeSeq: number
  page: number
  depth: string
  others?: OtherServer[]
}): Promise<{ rate: Figure; cpu: Figure; parley: number; raw: number; others: { rate: number; cpu: CpuPerPage }[] }> {
  const { client } = opts
  const others = opts.others ?? []
  const pool = new pg.Pool({ connectionString: opts.databaseUrl, max: CONCURRENCY })
  // Its own connection, so that the backend asking /proc's figures is the same one, left out, before and after.
  const accounting = new pg.Client({ connectionString: opts.databaseUrl })
  await accounting.connect()
  const database = new URL(opts.databaseUrl).pathname.slice(1)
  try {
    const raw = () =>
      pool.query<RawRow>({
        name: 'bench_history_page',
        text: RAW_PAGE,
        values: [opts.conversationId, opts.beforeSeq, opts.page],
      })
    const rawRows = (await raw()).rows.map((r) => `${r.seq} ${r.handle} ${r.text}`).join('\n')
    const sides = [{ server: opts.server, call: opts.call, rows: parleyPageRows }, ...others]
    for (const [i, side] of sides.entries()) {
      const rows = side.rows(await client.request({ endpoint: side.server.endpoint, call: side.call }))
      if (rows.join('\n') !== rawRows)
        throw new Error(`the raw page differs from ${i ? `${side.server.endpoint}'s` : "Parley's"} page`)
    }
    const cpu = sides.map(() => [] as CpuPerPage[])
    const rawCpu: CpuPerPage[] = []
    /** A round of pages through `side`, its CPU per page (server, database, load client) into `into`. */
    const httpRound = (side: OtherServer, into: CpuPerPage[]) => async () => {
      const calls = Array.from({ length: PARLEY_PAGES }, () => side.call)
      const [server0, client0] = [side.server.cpuSeconds(), processCpuSeconds(client.pid)]
      const { result, databaseSeconds } = await withDatabaseCpu(accounting, database, () =>
        client.throughput({ endpoint: side.server.endpoint, concurrency: CONCURRENCY, calls }),
      )
      const perPage = (seconds: number) => (seconds * 1e6) / PARLEY_PAGES
      into.push({
        server: perPage(side.server.cpuSeconds() - server0),
        database: perPage(databaseSeconds),
        'load client': perPage(processCpuSeconds(client.pid) - client0),
      })
      return result
    }
    const rawRound = async () => {
      const own = process.cpuUsage()
      const { result, databaseSeconds } = await withDatabaseCpu(accounting, database, () =>
        throughput(RAW_PAGES, CONCURRENCY, raw),
      )
      const { user, system } = process.cpuUsage(own)
      rawCpu.push({ database: (databaseSeconds * 1e6) / RAW_PAGES, 'pg client': (user + system) / RAW_PAGES })
      return result
    }
    const [parleyRound, ...otherRounds] = sides.map((side, i) => httpRound(side, cpu[i]!))
    const samples = await alternatingSamples(RUNS, [parleyRound!, rawRound, ...otherRounds], {
      reverseEveryOther: true,
    })
    const [parley, sql, ...rates] = samples.map(median) as [number, number, ...number[]]
    // The first round of each side is alternatingSamples' warm-up.
    const [parleyCpu, ...otherCpus] = cpu.map((rounds) => medianSplit(rounds.slice(1)))
    const rawSplit = medianSplit(rawCpu.slice(1))
    const rate: Figure = {
      scenario: `3 history pages of ${opts.page} at concurrency ${CONCURRENCY}, ${opts.depth} (HTTP)`,
      metric: 'pages/s',
      value: parley.toFixed(0),
      baseline: `${sql.toFixed(0)} (raw keyset SQL through pg, page + sender handles)`,
      ratio: parley / sql,
      target: '≥ 0.25',
      met: parley / sql >= 0.25,
    }
    return {
      rate,
      cpu: {
        scenario: `3 machine CPU per history page, ${opts.depth}: Parley's server, database backends and load client`,
        metric: 'CPU µs/page',
        value: total(parleyCpu!).toFixed(0),
        baseline: `${total(rawSplit).toFixed(0)} (raw keyset SQL: database backends and pg client)`,
        ratio: total(parleyCpu!) / total(rawSplit),
        target: 'reported',
        met: true,
        note: `Parley: ${described(parleyCpu!)} µs; raw: ${described(rawSplit)} µs`,
      },
      parley,
      raw: sql,
      others: others.map((_, i) => ({ rate: rates[i]!, cpu: otherCpus[i]! })),
    }
  } finally {
    await accounting.end()
    await pool.end()
  }
}
