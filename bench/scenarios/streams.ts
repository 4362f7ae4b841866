import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import { encodeGlobalId } from '../../src/domain/core/ids.ts'
import { DELTAS_PER_SECOND } from '../../src/domain/streams/limits.ts'
import type { LoadClient } from '../client.ts'
import { percentile } from '../measure.ts'
import { startParleyProcess, type ParleyProcess } from '../server-process.ts'
import { insertGroups, insertUsers, withClient } from '../setup.ts'
import { createScenarioDatabase, startParley, tokenFor, type DatabaseHost, type Figure } from '../support.ts'

const MEMBERS = 100
/** Rounds of the delivery phase: one send, then one delta, each awaited until all subscribers have it. */
const ROUNDS = Number(process.env.BENCH_STREAMS_ROUNDS ?? 200)
const WARMUP = 20
/** Deltas (and edits) of the write phase. */
const DELTAS = 1000
/** The paces of the write phase, deltas a second: a fast model near the limit, and a slow one. */
const PACES = [200, 50]
/** How long PostgreSQL's backends may hold their statistics before reporting them (1 s at most when idle). */
const STATS_FLUSH_MS = 1500

const EVENTS = `subscription Events($id: ID!) { conversationEvents(conversationId: $id, sincePts: 0) { __typename
  ... on MessageEvent { message { content { ... on TextContent { text } } } } ... on MessageStreamEvent { delta } } }`
const SEND = `mutation Send($input: SendMessageInput!) { sendMessage(input: $input) { message { id } } }`
const START = `mutation Start($id: ID!, $key: String!) { startStreamingMessage(conversationId: $id, clientMessageId: $key) { message { id } } }`
const APPEND = `mutation Append($m: ID!, $s: Int!, $d: String!) { appendToStreamingMessage(messageId: $m, sequence: $s, delta: $d) }`
const FINISH = `mutation Finish($m: ID!) { finishStreamingMessage(messageId: $m) { id } }`
const EDIT = `mutation Edit($m: ID!, $t: String!) { editMessage(messageId: $m, content: { text: { text: $t } }) { id } }`

/** The calls of the streaming agent (member-0) to the server at `endpoint`. */
const callerOf = (client: LoadClient, token: string, conversationId: string) => (endpoint: string) => {
  const call = <T>(query: string, variables: Record<string, unknown>) =>
    client.request({ endpoint, call: { token, query, variables } }) as Promise<T>
  const send = (text: string) =>
    call<{ sendMessage: { message: { id: string } } }>(SEND, {
      input: { conversationId, clientMessageId: text, content: { text: { text } } },
    })
  const start = async (key: string) =>
    (await call<{ startStreamingMessage: { message: { id: string } } }>(START, { id: conversationId, key }))
      .startStreamingMessage.message.id
  return { call, send, start }
}
type Caller = ReturnType<typeof callerOf>

/**
 * Streamed replies (issue 42): one stream in a group of 100 members, all subscribed over graphql-ws.
 * Delivery: the delay from an appendToStreamingMessage call to each subscriber's MessageStreamEvent,
 * against a send's MessageEvent to the same subscribers, alternated in one run (the server as
 * `npm start` runs it). Writes: the SQL statements 1,000 deltas cost, against 1,000 editMessage
 * calls (each a new version of the text), counted by a server in this process: `npm start`'s
 * pollers (webhooks every 100 ms, reminders, the stream sweeper) commit some 27 transactions a
 * second whatever happens, more than 1,000 deltas write, so pg_stat_database cannot tell them apart.
 */
export async function streams(host: DatabaseHost, client: LoadClient): Promise<Figure[]> {
  const database = await createScenarioDatabase(host, 'streams')
  // Statistics are read from the admin database: the reading itself commits nothing in the measured one.
  const stats = new pg.Client({ connectionString: host.adminUrl })
  await stats.connect()
  try {
    const group = await withClient(
      database.url,
      async (c) => (await insertGroups(c, 1, await insertUsers(c, 'member', MEMBERS)))[0]!,
    )
    const id = encodeGlobalId('Conversation', group)
    const tokens = await Promise.all(Array.from({ length: MEMBERS }, (_, i) => tokenFor(`member-${i}`)))
    const caller = callerOf(client, tokens[0]!, id)
    const parley = await startParleyProcess(database.url)
    const delivery = await deliveryPhase(client, parley, tokens, id, caller(parley.endpoint)).finally(() =>
      parley.close(),
    )

    const counting = await startParley(database.url, 40, { countStatements: true })
    const { edits, paced } = await writePhase(counting, caller(counting.endpoint), (work) =>
      countWrites(stats, new URL(database.url).pathname.slice(1), work),
    ).finally(() => counting.close())

    const { p50, p99, sendP50, sendP99 } = delivery
    return [
      {
        scenario: `streams: one append delivered to ${MEMBERS} subscribers (graphql-ws MessageStreamEvent)`,
        metric: 'p99 delivery ms',
        value: `${p99.toFixed(1)} (p50 ${p50.toFixed(1)})`,
        baseline: `${sendP99.toFixed(1)} (a send's MessageEvent to the same ${MEMBERS}; p50 ${sendP50.toFixed(1)})`,
        ratio: p99 / sendP99,
        target: 'p99 ≤ 50 ms',
        met: p99 <= 50,
        note: `${ROUNDS} rounds of one send and one delta after ${WARMUP} of each, every one awaited until all ${MEMBERS} subscribers had it`,
      },
      ...paced.map((p) => ({
        scenario: `streams: SQL statements per ${DELTAS.toLocaleString('en')} deltas at ${p.pace}/s, no subscriber (the writes)`,
        metric: 'statements',
        value: String(p.statements),
        baseline: `${edits.statements} (${DELTAS.toLocaleString('en')} editMessage calls)`,
        ratio: p.statements / edits.statements,
        target: '≤ 50',
        met: p.statements <= 50,
        note: `the ${DELTAS.toLocaleString('en')} appends took ${p.seconds.toFixed(1)} s; pg_stat_database: ${p.transactions} transactions and ${p.rows} rows written, by the edits ${edits.transactions} and ${edits.rows}`,
      })),
    ]
  } finally {
    await stats.end()
    await database.drop()
  }
}

/**
 * The statements (and pg_stat_database's transactions and rows) of DELTAS edits of one message, then
 * of DELTAS appends to a stream at each of PACES.
 */
async function writePhase(
  counting: { statements: { count: number } },
  { call, send, start }: ReturnType<Caller>,
  countWrites: (work: () => Promise<void>) => Promise<Written>,
) {
  const counted = async (work: () => Promise<void>) => {
    const before = counting.statements.count
    const written = await countWrites(work)
    return { ...written, statements: counting.statements.count - before }
  }
  const edited = (await send('edited')).sendMessage.message.id
  const edits = await counted(async () => {
    for (let i = 1, text = ''; i <= DELTAS; i++) await call(EDIT, { m: edited, t: (text += 'x ') })
  })
  const paced = []
  for (const pace of PACES) {
    const m = await start(`paced-${pace}`)
    let seconds = 0
    const written = await counted(async () => {
      const begun = performance.now()
      // Spaced, never caught up in a burst: a stall must not push a second past the stream's limit.
      for (let i = 1, next = 0; i <= DELTAS; i++) {
        await sleep(Math.max(0, next - performance.now()))
        next = performance.now() + 1000 / pace
        await call(APPEND, { m, s: i, d: 'x ' })
      }
      seconds = (performance.now() - begun) / 1000
    })
    await call(FINISH, { m })
    paced.push({ pace, seconds, ...written })
  }
  return { edits, paced }
}

/** The p50 and p99 of a delta's and of a send's delivery to every member, alternated round by round. */
async function deliveryPhase(
  client: LoadClient,
  parley: ParleyProcess,
  tokens: string[],
  id: string,
  { send, start }: ReturnType<Caller>,
) {
  // The first message is what each subscription replays (sincePts 0) to tell it is live.
  await send('first')
  await client.openSubscribers({
    wsUrl: parley.endpoint.replace(/^http/, 'ws'),
    calls: tokens.map((token) => ({ token, query: EVENTS, variables: { id } })),
  })
  const m = await start('delivered')
  const request = (query: string, variables: Record<string, unknown>) => ({ token: tokens[0]!, query, variables })
  const deltas: number[] = []
  const sends: number[] = []
  for (let i = 0, next = 0; i < WARMUP + ROUNDS; i++) {
    const text = `send-${i}`
    const sent = await client.deliver({
      endpoint: parley.endpoint,
      text,
      send: request(SEND, { input: { conversationId: id, clientMessageId: text, content: { text: { text } } } }),
    })
    // Each delta is unique (subscribers match it by its text); the stream's limit is never reached.
    await sleep(Math.max(0, next - performance.now()))
    next = performance.now() + 1000 / (DELTAS_PER_SECOND / 2)
    const delta = `t${i} `
    const streamed = await client.deliver({
      endpoint: parley.endpoint,
      text: delta,
      send: request(APPEND, { m, s: i + 1, d: delta }),
    })
    if (i >= WARMUP) {
      sends.push(...sent)
      deltas.push(...streamed)
    }
  }
  await client.request({ endpoint: parley.endpoint, call: request(FINISH, { m }) })
  await client.closeSubscribers()
  return {
    p50: percentile(deltas, 50),
    p99: percentile(deltas, 99),
    sendP50: percentile(sends, 50),
    sendP99: percentile(sends, 99),
  }
}

type Written = { transactions: number; rows: number }

/** What the database `name` committed and wrote while `work` ran (and its statistics reached pg_stat_database). */
async function countWrites(stats: pg.Client, name: string, work: () => Promise<void>): Promise<Written> {
  const read = async () => {
    const { rows } = await stats.query<{ transactions: string; rows: string }>(
      `SELECT xact_commit + xact_rollback AS transactions, tup_inserted + tup_updated + tup_deleted AS rows
       FROM pg_stat_database WHERE datname = $1`,
      [name],
    )
    return { transactions: Number(rows[0]!.transactions), rows: Number(rows[0]!.rows) }
  }
  await sleep(STATS_FLUSH_MS)
  const before = await read()
  await work()
  await sleep(STATS_FLUSH_MS)
  const after = await read()
  return {
    transactions: after.transactions - before.transactions,
    rows: after.rows - before.rows,
  }
}
