import pg from 'pg'
import { encodeGlobalId } from '../../src/domain/core/ids.ts'
import { insertGroups, insertUsers, withClient } from '../setup.ts'
import type { GraphQLCall, LoadClient } from '../client.ts'
import { alternatingMedians, median, percentile, throughput } from '../measure.ts'
import { startParleyProcess, type ParleyProcess } from '../server-process.ts'
import { createScenarioDatabase, tokenFor, withSettledPool, type DatabaseHost, type Figure } from '../support.ts'

export const SENDERS = 32
export const MESSAGES_PER_RUN = Number(process.env.BENCH_SEND_MESSAGES ?? 3000)
export const RUNS = 3
const LONE_SAMPLES = 300

const SEND = `mutation Send($input: SendMessageInput!) { sendMessage(input: $input) { deduplicated message { seq } } }`

/** The seed's send transaction as raw SQL: lock the conversation row, insert, bump the counters. */
async function rawSend(
  pool: pg.Pool,
  conversationId: number,
  senderId: number,
  clientMessageId: string,
): Promise<void> {
  const client = await pool.connect()
  try {
    await client.query('BEGIN')
    const { rows } = await client.query('SELECT last_seq, last_pts FROM conversations WHERE id = $1 FOR UPDATE', [
      conversationId,
    ])
    const seq = Number(rows[0].last_seq) + 1
    const pts = Number(rows[0].last_pts) + 1
    await client.query(
      `INSERT INTO messages (conversation_id, seq, pts, sender_type, sender_id, kind, client_message_id, content)
       VALUES ($1, $2, $3, 'USER', $4, 'TEXT', $5, $6)`,
      [conversationId, seq, pts, senderId, clientMessageId, JSON.stringify({ text: 'hello' })],
    )
    await client.query(
      'UPDATE conversations SET last_seq = $2, last_pts = $3, last_activity_at = now() WHERE id = $1',
      [conversationId, seq, pts],
    )
    await client.query('COMMIT')
  } finally {
    client.release()
  }
}

/**
 * The database's ceiling for a send: the whole transaction (lock the conversation row, check
 * membership and idempotency, insert the message and its search document, bump seq/pts, move the
 * sender's read position) as ONE plpgsql call, one round trip. The document is the text's words as
 * `to_tsvector('simple', …)` gives them, the same lexemes Parley writes for these texts, into the same
 * indexes. Created in the fixture database only; the app never has it.
 */
const SEND_FUNCTION = `
CREATE FUNCTION bench_send(p_conversation bigint, p_sender bigint, p_client_message_id varchar, p_content jsonb) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
  v_seq bigint;
  v_pts bigint;
  v_stored bigint;
BEGIN
  SELECT last_seq + 1, last_pts + 1 INTO v_seq, v_pts FROM conversations WHERE id = p_conversation FOR UPDATE;
  IF NOT FOUND THEN RAISE EXCEPTION 'conversation % not found', p_conversation; END IF;
  PERFORM 1 FROM conversation_members WHERE conversation_id = p_conversation AND user_id = p_sender AND left_at IS NULL;
  IF NOT FOUND THEN RAISE EXCEPTION 'not a member of conversation %', p_conversation; END IF;
  SELECT seq INTO v_stored FROM messages
  WHERE conversation_id = p_conversation AND sender_type = 'USER' AND sender_id = p_sender AND client_message_id = p_client_message_id;
  IF FOUND THEN RETURN v_stored; END IF;
  INSERT INTO messages (conversation_id, seq, pts, sender_type, sender_id, kind, client_message_id, content)
  VALUES (p_conversation, v_seq, v_pts, 'USER', p_sender, 'TEXT', p_client_message_id, p_content);
  INSERT INTO message_search (conversation_id, seq, sent_at, document)
  SELECT p_conversation, v_seq, now(), d FROM to_tsvector('simple', coalesce(p_content->>'text', '')) d WHERE d <> '';
  UPDATE conversations SET last_seq = v_seq, last_pts = v_pts, last_activity_at = now() WHERE id = p_conversation;
  UPDATE conversation_members SET last_read_seq = greatest(last_read_seq, v_seq), last_read_at = now()
  WHERE conversation_id = p_conversation AND user_id = p_sender;
  RETURN v_seq;
END $$`

/** The `i`th send of a load run: to a random conversation, from the `sender`th sender (user id `senderId`). */
export type Send = { conversationId: number; sender: number; senderId: number; clientMessageId: string; i: number }

/** A database with 32 senders who are members of `conversationCount` groups, and a Parley server on it (with `env`). */
export async function sendFixture(
  host: DatabaseHost,
  client: LoadClient,
  name: string,
  conversationCount: number,
  env: Record<string, string> = {},
) {
  const database = await createScenarioDatabase(host, name)
  const { senders, conversations } = await withClient(database.url, async (client) => {
    const senders = await insertUsers(client, 'sender', SENDERS)
    await client.query(SEND_FUNCTION)
    return { senders, conversations: await insertGroups(client, conversationCount, senders) }
  })
  const tokens = await Promise.all(senders.map((_, i) => tokenFor(`sender-${i}`)))
  const parley = await startParleyProcess(database.url, { poolSize: SENDERS + 8, env })
  // Each baseline run opens its connections and has them closed before anything else runs: the
  // servers measured in between need the database's connections, and not its backends' exits.
  const onBaselinePool = <T>(work: (pool: pg.Pool) => Promise<T>) => withSettledPool(database.url, SENDERS, work)
  let run = 0
  const pick = () => conversations[Math.floor(Math.random() * conversations.length)]!
  /** Sends through HTTP GraphQL from the load client to `endpoint`, each the call `call` makes of it; msgs/s and each send's ms. */
  const viaGraphQL = (
    endpoint: string,
    call: (send: Send) => GraphQLCall,
    count = MESSAGES_PER_RUN,
    concurrency = SENDERS,
  ) => {
    const r = ++run
    const calls = Array.from({ length: count }, (_, i) =>
      call({
        conversationId: pick(),
        sender: i % SENDERS,
        senderId: senders[i % SENDERS]!,
        clientMessageId: `r${r}-${i}`,
        i,
      }),
    )
    return client.load({ endpoint, concurrency, calls })
  }
  return {
    parley,
    viaGraphQL,
    /** Parley's sendMessage, to `server` (default: the fixture's); msgs/s and each send's ms. */
    viaParley: (count = MESSAGES_PER_RUN, concurrency = SENDERS, server: ParleyProcess = parley) =>
      viaGraphQL(
        server.endpoint,
        ({ conversationId, sender, clientMessageId, i }) => ({
          token: tokens[sender]!,
          query: SEND,
          variables: {
            input: {
              conversationId: encodeGlobalId('Conversation', conversationId),
              clientMessageId,
              content: { text: { text: `hello ${i}` } },
            },
          },
        }),
        count,
        concurrency,
      ),
    /** The same sends as separate statements through pg; msgs/s. */
    viaSql: (count = MESSAGES_PER_RUN, concurrency = SENDERS) => {
      const r = ++run
      return onBaselinePool((pool) =>
        throughput(count, concurrency, (i) => rawSend(pool, pick(), senders[i % SENDERS]!, `raw-r${r}-${i}`)),
      )
    },
    /** The same sends as one bench_send call each through pg; msgs/s. */
    viaFunction: (count = MESSAGES_PER_RUN, concurrency = SENDERS) => {
      const r = ++run
      return onBaselinePool((pool) =>
        throughput(count, concurrency, (i) =>
          pool.query('SELECT bench_send($1, $2, $3, $4)', [
            pick(),
            senders[i % SENDERS]!,
            `fn-r${r}-${i}`,
            JSON.stringify({ text: `hello ${i}` }),
          ]),
        ),
      )
    },
    databaseUrl: database.url,
    async close() {
      await parley.close()
      await database.drop()
    },
  }
}

type Fixture = Awaited<ReturnType<typeof sendFixture>>

/** One Parley run as a throughput measurement; each run's p99 goes to `p99s`. */
const measuredRun = (fixture: Fixture, server: ParleyProcess, p99s: number[]) => async () => {
  const { perSecond, ms } = await fixture.viaParley(MESSAGES_PER_RUN, SENDERS, server)
  p99s.push(percentile(ms, 99))
  return perSecond
}

/**
 * A lone sender's latency with coalescing on (the fixture's server) and off (`uncoalesced`), alternating
 * send by send so both see the same machine. Measured on fresh servers: after a load run, a server's
 * pooled connections answer a lone sender slower whatever it does.
 */
async function loneSender(fixture: Fixture, uncoalesced: ParleyProcess): Promise<[number, number]> {
  // One send's latency, measured in the load client.
  const sendAlone = async (server: ParleyProcess) => (await fixture.viaParley(1, 1, server)).ms[0]!
  const on: number[] = []
  const off: number[] = []
  await fixture.viaParley(50, 1)
  await fixture.viaParley(50, 1, uncoalesced)
  for (let i = 0; i < LONE_SAMPLES; i++) {
    on.push(await sendAlone(fixture.parley))
    off.push(await sendAlone(uncoalesced))
  }
  return [median(on), median(off)]
}

const loneFigure = (scenario: string, [coalesced, uncoalesced]: [number, number]): Figure => ({
  scenario,
  metric: 'p50 ms',
  value: coalesced.toFixed(2),
  baseline: `${uncoalesced.toFixed(2)} (coalescing off)`,
  ratio: coalesced / uncoalesced,
  target: '≤ 1.1',
  met: coalesced / uncoalesced <= 1.1,
})

/**
 * Scenario 1: 32 concurrent senders, each message to a random one of 1,000 conversations, through
 * HTTP GraphQL; baselines: the same transaction as separate statements through pg, and as one SQL
 * function call (the database's ceiling), both with 32 connections. Also a lone sender's latency
 * (before any load) and p99 under load, coalescing on against off.
 */
export async function sendThroughput(host: DatabaseHost, client: LoadClient): Promise<Figure[]> {
  const fixture = await sendFixture(host, client, 'send', 1000)
  const uncoalesced = await startParleyProcess(fixture.databaseUrl, {
    poolSize: SENDERS + 8,
    env: { SEND_COALESCING: 'false' },
  })
  try {
    const lone = await loneSender(fixture, uncoalesced)
    const p99 = { on: [] as number[], off: [] as number[] }
    // Every second round in reverse order, so no side always runs right after the same other.
    const [statements, oneCall, measured, off] = (await alternatingMedians(
      RUNS,
      [
        () => fixture.viaSql(),
        () => fixture.viaFunction(),
        measuredRun(fixture, fixture.parley, p99.on),
        measuredRun(fixture, uncoalesced, p99.off),
      ],
      { reverseEveryOther: true },
    )) as [number, number, number, number]
    // The first run of each is the warm-up.
    const [p99On, p99Off] = [median(p99.on.slice(1)), median(p99.off.slice(1))]
    const scenario = '1 send throughput (1,000 conversations, 32 senders, HTTP)'
    return [
      {
        scenario,
        metric: 'msgs/s',
        value: measured.toFixed(0),
        baseline: `${statements.toFixed(0)} (pg, the transaction as separate statements)`,
        ratio: measured / statements,
        target: '≥ 0.7',
        met: measured / statements >= 0.7,
      },
      {
        scenario,
        metric: 'msgs/s',
        value: measured.toFixed(0),
        baseline: `${oneCall.toFixed(0)} (pg, the transaction as one SQL function call)`,
        ratio: measured / oneCall,
        target: '≥ 0.3',
        met: measured / oneCall >= 0.3,
      },
      {
        scenario: '1 send throughput, coalescing off (SEND_COALESCING=false)',
        metric: 'msgs/s',
        value: off.toFixed(0),
        baseline: `${statements.toFixed(0)} (pg, the transaction as separate statements)`,
        ratio: off / statements,
        target: 'reported',
        met: true,
      },
      {
        scenario: '1 send latency under load (32 senders)',
        metric: 'p99 ms',
        value: p99On.toFixed(1),
        baseline: `${p99Off.toFixed(1)} (coalescing off)`,
        ratio: p99On / p99Off,
        target: 'reported',
        met: true,
      },
      loneFigure('1 lone sender latency, coalescing on (fresh servers)', lone),
    ]
  } finally {
    await uncoalesced.close()
    await fixture.close()
  }
}

/**
 * Scenario 2: 32 concurrent senders into ONE conversation. Parley coalesces concurrent sends into
 * shared transactions; baseline: raw one-message-per-transaction FOR UPDATE. Also a lone sender's
 * latency with coalescing on vs off, before the load runs.
 */
export async function hotConversation(host: DatabaseHost, client: LoadClient): Promise<Figure[]> {
  const fixture = await sendFixture(host, client, 'hot', 1)
  const uncoalesced = await startParleyProcess(fixture.databaseUrl, { poolSize: 4, env: { SEND_COALESCING: 'false' } })
  try {
    const lone = await loneSender(fixture, uncoalesced)
    const [baseline, measured] = (await alternatingMedians(RUNS, [
      () => fixture.viaSql(),
      async () => (await fixture.viaParley()).perSecond,
    ])) as [number, number]
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
      loneFigure('2 lone sender latency, coalescing on (fresh servers)', lone),
    ]
  } finally {
    await uncoalesced.close()
    await fixture.close()
  }
}
