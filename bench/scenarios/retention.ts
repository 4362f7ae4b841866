import pg from 'pg'
import { encodeGlobalId } from '../../src/domain/core/ids.ts'
import { signToken } from '../../src/http/auth/hs256.ts'
import { insertGroups, insertUsers, withClient } from '../setup.ts'
import type { GraphQLCall, LoadClient } from '../client.ts'
import { median, percentile } from '../measure.ts'
import { startParleyProcess, type ParleyProcess } from '../server-process.ts'
import { AUTH_SECRET, createScenarioDatabase, tokenFor, type DatabaseHost, type Figure } from '../support.ts'

/** Expired messages in each conversation a round sweeps or deletes. */
const MESSAGES = Number(process.env.BENCH_RETENTION_MESSAGES ?? 50_000)
const ROUNDS = 3
const SENDERS = 8
/** The tables the fixture fills beside messages: the rows a sweep deletes with them. */
const DEPENDENTS = ['message_search', 'message_reactions', 'message_reaction_groups', 'message_user_actions']
const DEPENDENTS_EDITS = [...DEPENDENTS, 'message_edits']

const SEND = `mutation Send($input: SendMessageInput!) { sendMessage(input: $input) { message { seq } } }`
const SET_RETENTION = `mutation Retain($id: ID!) { setRetention(conversationId: $id, seconds: 3600) { retentionSeconds } }`

/**
 * `MESSAGES` text messages two days old in each of `ids`, each with a search document, every fifth
 * with a reaction (and its group), every tenth a favourite and an edit: what a sweep deletes with them.
 */
async function fillExpired(client: pg.Client, ids: number[], senderId: number): Promise<void> {
  await client.query(
    `INSERT INTO messages (conversation_id, seq, pts, sender_type, sender_id, kind, client_message_id, content, sent_at)
     SELECT c, s, s, 'USER', $2, 'TEXT', 'old-' || s, jsonb_build_object('text', 'old message number ' || s),
       now() - interval '2 days' + make_interval(secs => s / 1000.0)
     FROM unnest($1::bigint[]) c, generate_series(1, $3::bigint) s`,
    [ids, senderId, MESSAGES],
  )
  const rows = `FROM messages m WHERE m.conversation_id = ANY($1::bigint[])`
  await client.query(
    `INSERT INTO message_search (conversation_id, seq, sent_at, document)
     SELECT m.conversation_id, m.seq, m.sent_at, to_tsvector('simple', m.content->>'text') ${rows}`,
    [ids],
  )
  await client.query(
    `INSERT INTO message_reactions (conversation_id, seq, emoji, user_id) SELECT m.conversation_id, m.seq, '👍', $2 ${rows} AND m.seq % 5 = 0`,
    [ids, senderId],
  )
  await client.query(
    `INSERT INTO message_reaction_groups (conversation_id, seq, emoji, count, first_reacted_at)
     SELECT m.conversation_id, m.seq, '👍', 1, now() ${rows} AND m.seq % 5 = 0`,
    [ids],
  )
  await client.query(
    `INSERT INTO message_user_actions (conversation_id, seq, user_id, action) SELECT m.conversation_id, m.seq, $2, 'FAVORITE' ${rows} AND m.seq % 10 = 0`,
    [ids, senderId],
  )
  await client.query(
    `INSERT INTO message_edits (conversation_id, seq, version, content) SELECT m.conversation_id, m.seq, 1, m.content ${rows} AND m.seq % 10 = 0`,
    [ids],
  )
  await client.query('UPDATE conversations SET last_seq = $2, last_pts = $2 WHERE id = ANY($1::bigint[])', [
    ids,
    MESSAGES,
  ])
}

/** Rows of the fixture a conversation has in messages and the dependents' tables (a check that both sides delete the same). */
async function rowsOf(pool: pg.Pool, conversationId: number): Promise<number> {
  const counts = await Promise.all(
    ['messages', ...DEPENDENTS_EDITS].map(
      async (table) =>
        (
          await pool.query(`SELECT count(*)::int AS n FROM ${table} WHERE conversation_id = $1 AND seq <= $2`, [
            conversationId,
            MESSAGES,
          ])
        ).rows[0].n as number,
    ),
  )
  return counts.reduce((a, b) => a + b, 0)
}

/**
 * The issue's baseline: a plain DELETE of the conversation's messages before a seq, in one
 * transaction, each dependent table's rows first (their foreign keys do not cascade).
 */
async function plainDelete(pool: pg.Pool, conversationId: number): Promise<void> {
  const client = await pool.connect()
  try {
    await client.query('BEGIN')
    for (const table of [...DEPENDENTS_EDITS, 'messages'])
      await client.query(`DELETE FROM ${table} WHERE conversation_id = $1 AND seq < $2`, [conversationId, MESSAGES + 1])
    await client.query('COMMIT')
  } finally {
    client.release()
  }
}

/** Seconds from setRetention until the server's own sweeper has moved retainedFromSeq past the fixture. */
async function serverSweep(
  client: LoadClient,
  parley: ParleyProcess,
  pool: pg.Pool,
  operator: string,
  conversationId: number,
): Promise<number> {
  const started = performance.now()
  const call = {
    token: operator,
    query: SET_RETENTION,
    variables: { id: encodeGlobalId('Conversation', conversationId) },
  }
  await client.request({ endpoint: parley.endpoint, call })
  for (;;) {
    const { rows } = await pool.query('SELECT retained_from_seq::int AS r FROM conversations WHERE id = $1', [
      conversationId,
    ])
    if (rows[0].r > MESSAGES) return (performance.now() - started) / 1000
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

let sent = 0
const sends = (tokens: string[], conversationId: number, count: number): GraphQLCall[] =>
  Array.from({ length: count }, (_, i) => ({
    token: tokens[i % SENDERS]!,
    query: SEND,
    variables: {
      input: {
        conversationId: encodeGlobalId('Conversation', conversationId),
        clientMessageId: `retention-${++sent}`,
        content: { text: { text: `new message ${sent}` } },
      },
    },
  }))

/**
 * The retention sweep's cost (issue 45), against the server as `npm start` runs it with
 * RETENTION_SWEEP_INTERVAL_MS=100: its own sweeper deletes a conversation's expired messages (with
 * their search documents, reactions, favourites and edits) in its batches of 500, timed from
 * setRetention until retainedFromSeq has passed them (the wait for the sweeper's next tick, at most
 * 100 ms, included), against a plain DELETE of an identical conversation's rows in one transaction
 * from this process; and the p99 of SENDERS concurrent sends into a conversation while the sweeper
 * deletes its expired prefix, against the same sends into the same conversation without a sweep.
 * Each round has three identical conversations, and runs the two send phases in alternating order.
 */
export async function retention(host: DatabaseHost, client: LoadClient): Promise<Figure[]> {
  const database = await createScenarioDatabase(host, 'retention')
  try {
    const ids = await withClient(database.url, async (pg) => {
      const senders = await insertUsers(pg, 'keeper', SENDERS)
      // Three a round, and one for the warm-up's sends.
      const groups = await insertGroups(pg, 3 * ROUNDS + 1, senders)
      await fillExpired(pg, groups, senders[0]!)
      await pg.query('VACUUM ANALYZE')
      return groups
    })
    const parley = await startParleyProcess(database.url, {
      env: { RETENTION_SWEEP_INTERVAL_MS: '100', RETENTION_MIN_SECONDS: '60' },
    })
    const pool = new pg.Pool({ connectionString: database.url, max: 4 })
    const operator = await signToken(AUTH_SECRET, 'retention-operator', { operator: true })
    const tokens = await Promise.all(Array.from({ length: SENDERS }, (_, i) => tokenFor(`keeper-${i}`)))
    try {
      const sweepRates: number[] = []
      const plainRates: number[] = []
      const quiet: number[] = []
      const swept: number[] = []
      const overlap: number[] = []
      // Warm-up: the send path, and the rate that sizes each phase to last about as long as a sweep.
      const warm = await client.load({
        endpoint: parley.endpoint,
        concurrency: SENDERS,
        calls: sends(tokens, ids.at(-1)!, 400),
      })
      for (let round = 0; round < ROUNDS; round++) {
        const [alone, plain, busy] = ids.slice(3 * round, 3 * round + 3) as [number, number, number]
        const expected = await rowsOf(pool, alone)
        if ((await rowsOf(pool, plain)) !== expected) throw new Error('the two copies differ')
        const sweepSeconds = await serverSweep(client, parley, pool, operator, alone)
        let started = performance.now()
        await plainDelete(pool, plain)
        const plainSeconds = (performance.now() - started) / 1000
        if ((await rowsOf(pool, alone)) !== 0 || (await rowsOf(pool, plain)) !== 0) throw new Error('rows left')
        sweepRates.push(MESSAGES / sweepSeconds)
        plainRates.push(MESSAGES / plainSeconds)

        const count = Math.max(200, Math.round(warm.perSecond * sweepSeconds * 0.8))
        const quietPhase = async () =>
          quiet.push(
            ...(
              await client.load({ endpoint: parley.endpoint, concurrency: SENDERS, calls: sends(tokens, busy, count) })
            ).ms,
          )
        const sweepPhase = async () => {
          started = performance.now()
          const [loaded, seconds] = await Promise.all([
            client.load({ endpoint: parley.endpoint, concurrency: SENDERS, calls: sends(tokens, busy, count) }),
            serverSweep(client, parley, pool, operator, busy),
          ])
          swept.push(...loaded.ms)
          overlap.push(Math.min(1, seconds / (count / loaded.perSecond)))
        }
        for (const phase of round % 2 ? [sweepPhase, quietPhase] : [quietPhase, sweepPhase]) await phase()
      }
      const [sweepRate, plainRate] = [median(sweepRates), median(plainRates)]
      const [p99, p99Quiet] = [percentile(swept, 99), percentile(quiet, 99)]
      const scale = `${MESSAGES.toLocaleString('en')} messages with search documents, 20% reacted, 10% favourited and edited`
      return [
        {
          scenario: `45 retention sweep: ${scale}, deleted by the server's sweeper (batches of 500, RETENTION_SWEEP_INTERVAL_MS=100)`,
          metric: 'messages/s',
          value: sweepRate.toFixed(0),
          baseline: `${plainRate.toFixed(0)} (plain DELETE … WHERE conversation_id = … AND seq < … of an identical copy, dependents first, one transaction)`,
          ratio: sweepRate / plainRate,
          target: '≥ 0.5',
          met: sweepRate / plainRate >= 0.5,
          note: `medians of ${ROUNDS} rounds; sweeper ${sweepRates.map((r) => r.toFixed(0)).join(', ')}, plain ${plainRates.map((r) => r.toFixed(0)).join(', ')} messages/s`,
        },
        {
          scenario: `45 ${SENDERS} concurrent sends into a conversation while the sweeper deletes its ${MESSAGES.toLocaleString('en')} expired messages`,
          metric: 'p99 ms',
          value: p99.toFixed(1),
          baseline: `${p99Quiet.toFixed(1)} (the same sends into the same conversation, no sweep)`,
          ratio: p99 / p99Quiet,
          target: '≤ 1.5',
          met: p99 / p99Quiet <= 1.5,
          note: `${swept.length} sends each side over ${ROUNDS} rounds; the sweep lasted ${overlap.map((o) => `${(o * 100).toFixed(0)}%`).join(', ')} of the sends' time; p50 ${percentile(swept, 50).toFixed(1)} vs ${percentile(quiet, 50).toFixed(1)} ms`,
        },
      ]
    } finally {
      await pool.end()
      await parley.close()
    }
  } finally {
    await database.drop()
  }
}
