import pg from 'pg'
import { encodeGlobalId } from '../../src/ids.ts'
import { insertGroups, insertUsers, withClient } from '../setup.ts'
import { createScenarioDatabase, graphqlRequest, medianOf, startParley, throughput, tokenFor, type DatabaseHost, type Figure } from '../support.ts'

const CONVERSATIONS = 1000
const SENDERS = 32
const MESSAGES_PER_RUN = Number(process.env.BENCH_SEND_MESSAGES ?? 3000)
const RUNS = 3

const SEND = `mutation Send($input: SendMessageInput!) { sendMessage(input: $input) { deduplicated message { seq } } }`

/**
 * Scenario 1: 32 concurrent senders, each message to a random one of 1,000 conversations, through
 * HTTP GraphQL; baseline: the same transaction (lock the conversation row, insert, bump counters) as
 * raw SQL through pg with 32 connections.
 */
export async function sendThroughput(host: DatabaseHost): Promise<Figure[]> {
  const database = await createScenarioDatabase(host, 'send')
  try {
    const { senders, conversations } = await withClient(database.url, async (client) => {
      const senders = await insertUsers(client, 'sender', SENDERS)
      return { senders, conversations: await insertGroups(client, CONVERSATIONS, senders) }
    })
    const tokens = await Promise.all(senders.map((_, i) => tokenFor(`sender-${i}`)))
    const conversationIds = conversations.map((id) => encodeGlobalId('Conversation', id))
    const parley = await startParley(database.url, SENDERS + 8)
    const pool = new pg.Pool({ connectionString: database.url, max: SENDERS })
    let run = 0
    try {
      const pick = () => Math.floor(Math.random() * CONVERSATIONS)
      const viaParley = () => {
        run++
        return throughput(MESSAGES_PER_RUN, SENDERS, (i) =>
          graphqlRequest(parley.endpoint, tokens[i % SENDERS]!, SEND, {
            input: { conversationId: conversationIds[pick()], clientMessageId: `r${run}-${i}`, content: { text: { text: `hello ${i}` } } },
          }),
        )
      }
      const viaSql = () => {
        run++
        return throughput(MESSAGES_PER_RUN, SENDERS, async (i) => {
          const client = await pool.connect()
          try {
            const conversationId = conversations[pick()]!
            await client.query('BEGIN')
            const { rows } = await client.query('SELECT last_seq, last_pts FROM conversations WHERE id = $1 FOR UPDATE', [conversationId])
            const seq = Number(rows[0].last_seq) + 1
            const pts = Number(rows[0].last_pts) + 1
            await client.query(
              `INSERT INTO messages (conversation_id, seq, pts, sender_type, sender_id, kind, client_message_id, content)
               VALUES ($1, $2, $3, 'USER', $4, 'TEXT', $5, $6)`,
              [conversationId, seq, pts, senders[i % SENDERS], `raw-r${run}-${i}`, JSON.stringify({ text: `hello ${i}` })],
            )
            await client.query('UPDATE conversations SET last_seq = $2, last_pts = $3, last_activity_at = now() WHERE id = $1', [conversationId, seq, pts])
            await client.query('COMMIT')
          } finally {
            client.release()
          }
        })
      }
      const baseline = await medianOf(RUNS, viaSql)
      const measured = await medianOf(RUNS, viaParley)
      const ratio = measured / baseline
      return [
        {
          scenario: '1 send throughput (1,000 conversations, 32 senders, HTTP)',
          metric: 'msgs/s',
          value: measured.toFixed(0),
          baseline: `${baseline.toFixed(0)} (raw SQL, pg, same transaction)`,
          ratio,
          target: '≥ 0.5',
          met: ratio >= 0.5,
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
