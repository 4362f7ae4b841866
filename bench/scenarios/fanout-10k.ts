import pg from 'pg'
import { insertGroups, insertUsers, withClient } from '../setup.ts'
import type { LoadClient } from '../client.ts'
import { median, percentile } from '../measure.ts'
import { startBareServer, startParleyProcess } from '../server-process.ts'
import { createScenarioDatabase, tokenFor, type DatabaseHost, type Figure } from '../support.ts'
import { liveConversation } from './fanout.ts'

const MEMBERS = Number(process.env.BENCH_FANOUT_10K_MEMBERS ?? 10_000)
/** The smaller audience the database work per send is compared with. */
const FEWER = MEMBERS / 10
/** The background workers' polling is read over this long before any subscription opens. */
const IDLE_MS = 30_000
/** Sends per phase; the first of each is a warm-up. */
const SENDS = Number(process.env.BENCH_FANOUT_10K_SENDS ?? 11)
/** A backend reports its counters to pg_stat_database within 10 s of going idle (PGSTAT_IDLE_INTERVAL). */
const STATS_FLUSH_MS = 11_000

type Counters = { transactions: number; rows: number; ms: number }
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** The database's transactions (a statement outside one is one) and rows returned, once every backend has reported. */
async function counters(connection: pg.Client, database: string): Promise<Counters> {
  await sleep(STATS_FLUSH_MS)
  await connection.query('SELECT pg_stat_clear_snapshot()')
  const { rows } = await connection.query(
    'SELECT xact_commit + xact_rollback AS t, tup_returned + tup_fetched AS r FROM pg_stat_database WHERE datname = $1',
    [database],
  )
  return { transactions: Number(rows[0].t), rows: Number(rows[0].r), ms: performance.now() }
}

/** What the database did between two readings. */
const between = (before: Counters, after: Counters): Counters => ({
  transactions: after.transactions - before.transactions,
  rows: after.rows - before.rows,
  ms: after.ms - before.ms,
})

/** Deliveries per second of one broadcast: every socket's, over the time the last one took. */
const perSecond = (latencies: number[]) => latencies.length / (Math.max(...latencies) / 1000)

/**
 * Scenario 5b (issue 49, item 2): one message to a group of 10,000 members, every member subscribed
 * over graphql-ws on a socket of its own, all in one Parley process: deliveries per second (each
 * send's 10,000 over the time its last delivery took, median of the sends) against a bare `ws` server
 * (bench/bare-ws.ts) broadcasting frames of the same size to 10,000 sockets of the same load client,
 * and p99 delivery. And the database's work per send with 1,000 and with 10,000 subscribers, from
 * pg_stat_database less the background workers' polling (read idle before the subscriptions open), which must not
 * grow with the subscribers beyond the membership rows of theirs a wave reads.
 */
export async function fanout10k(host: DatabaseHost, client: LoadClient): Promise<Figure[]> {
  const database = await createScenarioDatabase(host, 'fanout_10k')
  const connection = new pg.Client({ connectionString: database.url })
  await connection.connect()
  const dbName = new URL(database.url).pathname.slice(1)
  try {
    const group = await withClient(database.url, async (pg) => {
      const members = await insertUsers(pg, 'member', MEMBERS)
      return (await insertGroups(pg, 1, members))[0]!
    })
    const tokens = await Promise.all(Array.from({ length: MEMBERS }, (_, i) => tokenFor(`member-${i}`)))
    const parley = await startParleyProcess(database.url)
    let bytes = 0
    const work: Record<string, Counters> = {}
    let latencies: number[] = []
    let parleyRate = 0
    let idle: Counters = { transactions: 0, rows: 0, ms: 1 }
    try {
      const live = liveConversation(client, parley, tokens, group)
      await live.sendFirst()
      const idleFrom = await counters(connection, dbName)
      await sleep(IDLE_MS)
      idle = between(idleFrom, await counters(connection, dbName))
      /** SENDS sends to the open subscribers: database work per send, and the deliveries. */
      const phase = async (subscribers: number) => {
        await live.send(`warm-${subscribers}`)
        const before = await counters(connection, dbName)
        const sends: number[][] = []
        for (let i = 1; i < SENDS; i++) sends.push(await live.send(`m-${subscribers}-${i}`))
        work[subscribers] = between(before, await counters(connection, dbName))
        return sends
      }
      await live.open(FEWER, 1)
      await phase(FEWER)
      await live.open(MEMBERS - FEWER, 1, FEWER)
      const sends = await phase(MEMBERS)
      bytes = await client.frameBytes()
      latencies = sends.flat()
      parleyRate = median(sends.map(perSecond))
      await client.closeSubscribers()
    } finally {
      await parley.close()
    }
    const bare = await startBareServer('bare-ws.ts')
    let bareRate: number
    try {
      await client.openBare({ wsUrl: bare.endpoint.replace(/^http/, 'ws'), count: MEMBERS })
      const sends: number[][] = []
      for (let i = 0; i < SENDS; i++)
        sends.push(await client.deliverBare({ endpoint: bare.endpoint, text: `b-${i}`, bytes }))
      bareRate = median(sends.slice(1).map(perSecond))
      await client.closeBare()
    } finally {
      bare.close()
    }
    /** Per send, less the background workers' polling at the idle stretch's rate over the phase's length. */
    const perSend = (n: number, key: 'transactions' | 'rows') =>
      (work[n]![key] - (idle[key] * work[n]!.ms) / idle.ms) / (SENDS - 1)
    const growth = perSend(MEMBERS, 'transactions') / perSend(FEWER, 'transactions')
    const label = (n: number) => n.toLocaleString('en')
    return [
      {
        scenario: `5b one send to ${label(MEMBERS)} subscribers on as many sockets (graphql-ws), one process`,
        metric: 'deliveries/s',
        value: parleyRate.toFixed(0),
        baseline: `${bareRate.toFixed(0)} (a bare ws server broadcasting ${bytes}-byte frames to ${label(MEMBERS)} sockets)`,
        ratio: parleyRate / bareRate,
        target: '≥ 0.3',
        met: parleyRate / bareRate >= 0.3,
        note: `p99 delivery ${percentile(latencies, 99).toFixed(0)} ms (p50 ${percentile(latencies, 50).toFixed(0)}) over ${SENDS - 1} sends`,
      },
      {
        scenario: `5b database work per send: ${label(MEMBERS)} subscribers against ${label(FEWER)} (pg_stat_database)`,
        metric: 'transactions/send',
        value: perSend(MEMBERS, 'transactions').toFixed(1),
        baseline: `${perSend(FEWER, 'transactions').toFixed(1)} (${label(FEWER)} subscribers)`,
        ratio: growth,
        target: '≤ 1.1 (no per-subscriber statement)',
        met: growth <= 1.1,
        note: `rows returned per send ${perSend(MEMBERS, 'rows').toFixed(0)} against ${perSend(FEWER, 'rows').toFixed(0)}; a statement outside a transaction counts as one, less the background workers' polling over ${IDLE_MS / 1000} s idle before the subscriptions opened`,
      },
    ]
  } finally {
    await connection.end()
    await database.drop()
  }
}
