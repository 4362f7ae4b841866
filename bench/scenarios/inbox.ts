import { encodeGlobalId } from '../../src/ids.ts'
import { insertGroups, insertUsers, withClient } from '../setup.ts'
import type { GraphQLCall, LoadClient } from '../client.ts'
import { median, pairedMedians } from '../measure.ts'
import { startParleyProcess } from '../server-process.ts'
import { createScenarioDatabase, startParley, tokenFor, type DatabaseHost, type Figure } from '../support.ts'

const CONVERSATIONS = 1000
const MESSAGES_EACH = 5
const SAMPLES = 40
const RUNS = 5

const FIELDS = `id title unreadCount lastMessage { seq sentAt sender { handle } content { ... on TextContent { text } } }`
const INBOX = `query Inbox { viewer { conversations(first: 50) { edges { node { ${FIELDS} } } } } }`
const ONE = `query One($id: ID!) { conversation(id: $id) { ${FIELDS} } }`

/**
 * Scenario 4: a conversations page of 50 with lastMessage and unreadCount for a viewer in 1,000
 * conversations; baseline: one conversation with the same fields queried alone. Also the SQL
 * statement count of the page, counted by Prisma's query log in an in-process server (a count, not a time).
 */
export async function inbox(host: DatabaseHost, client: LoadClient): Promise<Figure[]> {
  const database = await createScenarioDatabase(host, 'inbox')
  try {
    const conversations = await withClient(database.url, async (client) => {
      const [viewer, other] = await insertUsers(client, 'inbox', 2)
      const ids = await insertGroups(client, CONVERSATIONS, [viewer!, other!])
      await client.query(
        `INSERT INTO messages (conversation_id, seq, pts, sender_type, sender_id, kind, client_message_id, content, sent_at)
         SELECT c, s, s, 'USER', $2, 'TEXT', 'seed-' || s, jsonb_build_object('text', 'hi ' || s), now() - make_interval(secs => c)
         FROM unnest($1::bigint[]) c CROSS JOIN generate_series(1, $3) s`,
        [ids, other, MESSAGES_EACH],
      )
      await client.query(
        `UPDATE conversations SET last_seq = $2, last_pts = $2, last_activity_at = now() - make_interval(secs => id) WHERE id = ANY($1)`,
        [ids, MESSAGES_EACH],
      )
      await client.query('VACUUM ANALYZE')
      return ids
    })
    const token = await tokenFor('inbox-0')
    const one = encodeGlobalId('Conversation', conversations[0]!)
    const inboxCall = { token, query: INBOX }
    const oneCall = { token, query: ONE, variables: { id: one } }
    const statements = await statementsOf(database.url, client, inboxCall)
    const parley = await startParleyProcess(database.url)
    try {
      const timed = (count: number, call: GraphQLCall) => client.latencies({ endpoint: parley.endpoint, count, call })
      await timed(20, inboxCall)
      await timed(20, oneCall)
      // Rounds of SAMPLES requests, alternating, so drift hits both alike.
      const [alone, inboxMs] = await pairedMedians(RUNS, async () => median(await timed(SAMPLES, oneCall)), async () => median(await timed(SAMPLES, inboxCall)))
      return [
        {
          scenario: `4 inbox page of 50 (lastMessage, unreadCount), viewer in ${CONVERSATIONS.toLocaleString('en')} conversations`,
          metric: 'p50 ms',
          value: inboxMs.toFixed(2),
          baseline: `${alone.toFixed(2)} (one conversation alone)`,
          ratio: inboxMs / alone,
          target: '≤ 3',
          met: inboxMs / alone <= 3,
        },
        {
          scenario: '4 inbox page of 50: SQL statements',
          metric: 'statements',
          value: String(statements),
          baseline: '6 (target ceiling)',
          ratio: statements / 6,
          target: '≤ 1 (≤ 6 statements)',
          met: statements <= 6,
        },
      ]
    } finally {
      await parley.close()
    }
  } finally {
    await database.drop()
  }
}

/** The SQL statements one warm inbox page takes (and a check that it is a full page). */
async function statementsOf(databaseUrl: string, client: LoadClient, call: GraphQLCall): Promise<number> {
  const counted = await startParley(databaseUrl, 4, { countStatements: true })
  try {
    await client.request({ endpoint: counted.endpoint, call })
    const before = counted.statements.count
    const page = await client.request({ endpoint: counted.endpoint, call })
    if (page.viewer.conversations.edges.length !== 50) throw new Error('expected a page of 50')
    return counted.statements.count - before
  } finally {
    await counted.close()
  }
}
