import pg from 'pg'
import type { GraphQLCall, LoadClient } from '../client.ts'
import { processCpuSeconds, withDatabaseCpu } from '../cpu.ts'
import { median, pairedMedians, throughput } from '../measure.ts'
import type { ParleyProcess } from '../server-process.ts'

import type { Figure } from '../support.ts'

/** A server answering the same call as Parley: its endpoint and CPU (bench/bare-history.ts). */
type Server = Pick<ParleyProcess, 'endpoint' | 'pid' | 'cpuSeconds'>

const CONCURRENCY = 8
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

/** CPU microseconds per page of each process a round ran on (the machine's 2 cores are shared by all). */
type CpuPerPage = Record<string, number>

const medianSplit = (rounds: CpuPerPage[]): CpuPerPage => Object.fromEntries(Object.keys(rounds[0]!).map((k) => [k, median(rounds.map((r) => r[k]!))]))
const total = (split: CpuPerPage) => Object.values(split).reduce((a, b) => a + b, 0)
const described = (split: CpuPerPage) => Object.entries(split).map(([k, v]) => `${k} ${v.toFixed(0)}`).join(', ')

/**
 * Pages per second of one history page through Parley's HTTP API, `concurrency` clients over
 * keep-alive, against the same page as raw keyset SQL through `pg` at the same concurrency (one
 * named statement: the page and its senders' handles), in alternating rounds. Before timing, both
 * sides must return the same rows. Also what a page costs the machine, per process, on both sides:
 * Parley's server, its database backends and the load client, against the raw page's backends and
 * `pg` client (this process), from /proc during the same rounds.
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
  /** Also measured against the raw page: the same page through this server (the floor under Parley's; bench/bare-history.ts). */
  floor?: Server
}): Promise<{ rate: Figure; cpu: Figure; floor?: Figure }> {
  const { client, server, call } = opts
  const endpoint = server.endpoint
  const pool = new pg.Pool({ connectionString: opts.databaseUrl, max: CONCURRENCY })
  // Its own connection, so that the backend asking /proc's figures is the same one, left out, before and after.
  const accounting = new pg.Client({ connectionString: opts.databaseUrl })
  await accounting.connect()
  const database = new URL(opts.databaseUrl).pathname.slice(1)
  const cpu = { parley: [] as CpuPerPage[], raw: [] as CpuPerPage[], floor: [] as CpuPerPage[] }
  try {
    const raw = () => pool.query<RawRow>({ name: 'bench_history_page', text: RAW_PAGE, values: [opts.conversationId, opts.beforeSeq, opts.page] })
    const edges: Edge[] = (await client.request({ endpoint, call })).conversation.messages.edges
    const parleyRows = edges.map((e) => `${e.node.seq} ${e.node.sender?.handle} ${e.node.content?.text}`).reverse()
    const rawRows = (await raw()).rows.map((r) => `${r.seq} ${r.handle} ${r.text}`)
    if (parleyRows.join('\n') !== rawRows.join('\n')) throw new Error('the raw page differs from the API page')
    if (opts.floor) {
      const floorEdges = (await client.request({ endpoint: opts.floor.endpoint, call })).conversation.messages.edges
      if (JSON.stringify(floorEdges) !== JSON.stringify(edges)) throw new Error('the floor server\'s page differs from the API page')
    }
    const calls = Array.from({ length: PARLEY_PAGES }, () => call)
    /** A round of pages through `httpServer`, its CPU per page (server, database, load client) into `into`. */
    const httpRound = (httpServer: Server, into: CpuPerPage[]) => async () => {
      const [server0, client0] = [httpServer.cpuSeconds(), processCpuSeconds(client.pid)]
      const { result, databaseSeconds } = await withDatabaseCpu(accounting, database, () =>
        client.throughput({ endpoint: httpServer.endpoint, concurrency: CONCURRENCY, calls }),
      )
      const perPage = (seconds: number) => (seconds * 1e6) / PARLEY_PAGES
      into.push({ server: perPage(httpServer.cpuSeconds() - server0), database: perPage(databaseSeconds), 'load client': perPage(processCpuSeconds(client.pid) - client0) })
      return result
    }
    const parleyRound = httpRound(server, cpu.parley)
    const rawRound = async () => {
      const own = process.cpuUsage()
      const { result, databaseSeconds } = await withDatabaseCpu(accounting, database, () => throughput(RAW_PAGES, CONCURRENCY, raw))
      const { user, system } = process.cpuUsage(own)
      cpu.raw.push({ database: (databaseSeconds * 1e6) / RAW_PAGES, 'pg client': (user + system) / RAW_PAGES })
      return result
    }
    const [parley, sql] = await pairedMedians(RUNS, parleyRound, rawRound)
    const [floor, floorSql] = opts.floor ? await pairedMedians(RUNS, httpRound(opts.floor, cpu.floor), rawRound) : [0, 0]
    // The first round of each side is pairedMedians' warm-up.
    const [parleyCpu, rawCpu] = [medianSplit(cpu.parley.slice(1)), medianSplit(cpu.raw.slice(1))]
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
        value: total(parleyCpu).toFixed(0),
        baseline: `${total(rawCpu).toFixed(0)} (raw keyset SQL: database backends and pg client)`,
        ratio: total(parleyCpu) / total(rawCpu),
        target: 'reported',
        met: true,
        note: `Parley: ${described(parleyCpu)} µs; raw: ${described(rawCpu)} µs`,
      },
      floor: opts.floor && {
        scenario: `3 history pages of ${opts.page} at concurrency ${CONCURRENCY}, ${opts.depth}: Parley's statement (store/history.ts) through node:http, no GraphQL server`,
        metric: 'pages/s',
        value: floor.toFixed(0),
        baseline: `${floorSql.toFixed(0)} (raw keyset SQL through pg, page + sender handles)`,
        ratio: floor / floorSql,
        target: 'reported',
        met: true,
        note: `CPU per page: ${described(medianSplit(cpu.floor.slice(1)))} µs; the floor under Parley's own page, in this process run: Parley reached ${((parley / sql) / (floor / floorSql)).toFixed(2)} of its ratio`,
      },
    }
  } finally {
    await accounting.end()
    await pool.end()
  }
}
