import pg from 'pg'
import { encodeGlobalId } from '../../src/ids.ts'
import { insertGroups, insertUsers, withClient } from '../setup.ts'
import type { LoadClient } from '../client.ts'
import { median, pairedMedians, throughput } from '../measure.ts'
import { startParleyProcess, type ParleyProcess } from '../server-process.ts'
import { createScenarioDatabase, tokenFor, type DatabaseHost, type Figure } from '../support.ts'

const SENDERS = 32
const MESSAGES_PER_RUN = Number(process.env.BENCH_SEND_MESSAGES ?? 3000)
const RUNS = 3
const LONE_SAMPLES = 300

const SEND = `mutation Send($input: SendMessageInput!) { sendMessage(input: $input) { deduplicated message { seq } } }`

/** The seed's send transaction as raw SQL: lock the conversation row, insert, bump the counters. */
async function rawSend(pool: pg.Pool, conversationId: number, senderId: number, clientMessageId: string): Promise<void> {
  const client = await pool.connect()
  try {
    await client.query('BEGIN')
    const { rows } = await client.query('SELECT last_seq, last_pts FROM conversations WHERE id = $1 FOR UPDATE', [conversationId])
    const seq = Number(rows[0].last_seq) + 1
    const pts = Number(rows[0].last_pts) + 1
    await client.query(
      `INSERT INTO messages (conversation_id, seq, pts, sender_type, sender_id, kind, client_message_id, content)
       VALUES ($1, $2, $3, 'USER', $4, 'TEXT', $5, $6)`,
      [conversationId, seq, pts, senderId, clientMessageId, JSON.stringify({ text: 'hello' })],
    )
    await client.query('UPDATE conversations SET last_seq = $2, last_pts = $3, last_activity_at = now() WHERE id = $1', [conversationId, seq, pts])
    await client.query('COMMIT')
  } finally {
    client.release()
  }
}

/** A database with 32 senders who are members of `conversationCount` groups, and a Parley server on it. */
async function sendFixture(host: DatabaseHost, client: LoadClient, name: string, conversationCount: number) {
  const database = await createScenarioDatabase(host, name)
  const { senders, conversations } = await withClient(database.url, async (client) => {
    const senders = await insertUsers(client, 'sender', SENDERS)
    return { senders, conversations: await insertGroups(client, conversationCount, senders) }
  })
  const tokens = await Promise.all(senders.map((_, i) => tokenFor(`sender-${i}`)))
  const parley = await startParleyProcess(database.url, { poolSize: SENDERS + 8 })
  const pool = new pg.Pool({ connectionString: database.url, max: SENDERS })
  // pool.end() resolves before its sockets close; the database's DROP … WITH (FORCE) may then end one,
  // which an idle client reports as an error that would otherwise crash the run.
  pool.on('error', () => {})
  let run = 0
  const pick = () => conversations[Math.floor(Math.random() * conversations.length)]!
  return {
    parley,
    /** Sends through HTTP GraphQL from the load client, to `server` (default: the fixture's); msgs/s. */
    viaParley: (count = MESSAGES_PER_RUN, concurrency = SENDERS, server: ParleyProcess = parley) => {
      const r = ++run
      const calls = Array.from({ length: count }, (_, i) => ({
        token: tokens[i % SENDERS]!,
        query: SEND,
        variables: { input: { conversationId: encodeGlobalId('Conversation', pick()), clientMessageId: `r${r}-${i}`, content: { text: { text: `hello ${i}` } } } },
      }))
      return client.throughput({ endpoint: server.endpoint, concurrency, calls })
    },
    /** The same sends as raw SQL through pg; msgs/s. */
    viaSql: (count = MESSAGES_PER_RUN, concurrency = SENDERS) => {
      const r = ++run
      return throughput(count, concurrency, (i) => rawSend(pool, pick(), senders[i % SENDERS]!, `raw-r${r}-${i}`))
    },
    databaseUrl: database.url,
    async close() {
      await pool.end()
      await parley.close()
      await database.drop()
    },
  }
}

/**
 * Scenario 1: 32 concurrent senders, each message to a random one of 1,000 conversations, through
 * HTTP GraphQL; baseline: the same transaction as raw SQL through pg with 32 connections.
 */
export async function sendThroughput(host: DatabaseHost, client: LoadClient): Promise<Figure[]> {
  const fixture = await sendFixture(host, client, 'send', 1000)
  try {
    const [baseline, measured] = await pairedMedians(RUNS, () => fixture.viaSql(), () => fixture.viaParley())
    return [
      {
        scenario: '1 send throughput (1,000 conversations, 32 senders, HTTP)',
        metric: 'msgs/s',
        value: measured.toFixed(0),
        baseline: `${baseline.toFixed(0)} (raw SQL, pg, same transaction)`,
        ratio: measured / baseline,
        target: '≥ 0.5',
        met: measured / baseline >= 0.5,
      },
    ]
  } finally {
    await fixture.close()
  }
}

/**
 * Scenario 2: 32 concurrent senders into ONE conversation. Parley coalesces concurrent sends into
 * shared transactions; baseline: raw one-message-per-transaction FOR UPDATE. Also a lone sender's
 * latency with coalescing on vs off.
 */
export async function hotConversation(host: DatabaseHost, client: LoadClient): Promise<Figure[]> {
  const fixture = await sendFixture(host, client, 'hot', 1)
  try {
    const [baseline, measured] = await pairedMedians(RUNS, () => fixture.viaSql(), () => fixture.viaParley())
    // A lone sender to the fixture's server (coalescing on) and to a second one with SEND_COALESCING=false,
    // alternating send by send, so both see the same machine.
    const uncoalescedServer = await startParleyProcess(fixture.databaseUrl, { poolSize: 4, env: { SEND_COALESCING: 'false' } })
    // One send's latency, measured in the load client: 1 / its msgs/s.
    const sendAlone = async (server: ParleyProcess) => 1000 / (await fixture.viaParley(1, 1, server))
    const on: number[] = []
    const off: number[] = []
    try {
      await fixture.viaParley(50, 1)
      await fixture.viaParley(50, 1, uncoalescedServer)
      for (let i = 0; i < LONE_SAMPLES; i++) {
        on.push(await sendAlone(fixture.parley))
        off.push(await sendAlone(uncoalescedServer))
      }
    } finally {
      await uncoalescedServer.close()
    }
    const coalesced = median(on)
    const uncoalesced = median(off)
    return [
      {
        scenario: '2 hot conversation (1 conversation, 32 senders, HTTP)',
        metric: 'msgs/s',
        value: measured.toFixed(0),
        baseline: `${baseline.toFixed(0)} (raw SQL, one message per FOR UPDATE transaction)`,
        ratio: measured / baseline,
        target: '≥ 2',
        met: measured / baseline >= 2,
      },
      {
        scenario: '2 lone sender latency, coalescing on',
        metric: 'p50 ms',
        value: coalesced.toFixed(2),
        baseline: `${uncoalesced.toFixed(2)} (coalescing off)`,
        ratio: coalesced / uncoalesced,
        target: '≤ 1.1',
        met: coalesced / uncoalesced <= 1.1,
      },
    ]
  } finally {
    await fixture.close()
  }
}
