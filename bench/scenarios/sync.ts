import { encodeGlobalId } from '../../src/domain/core/ids.ts'
import { insertGroups, insertUsers, withClient } from '../setup.ts'
import type { GraphQLCall, LoadClient } from '../client.ts'
import { median, pairedMedians } from '../measure.ts'
import { startParleyProcess } from '../server-process.ts'
import { createScenarioDatabase, tokenFor, type DatabaseHost, type Figure } from '../support.ts'

const BIG = 10_000
const SMALL = 10
const CHANGED = 5
const GROUP = 1000
const SAMPLES = 40
const RUNS = 5

const TOKEN = `query Token { viewer { syncToken } }`
const SYNC = `query Sync($since: String!) { sync(since: $since) { token hasMore conversations { id lastPts unreadCount } removedConversationIds messageStates { messageId } } }`
const SEND = `mutation Send($input: SendMessageInput!) { sendMessage(input: $input) { message { id } } }`
/** Tables a send could write to; rows written = row versions whose xmin is the send's transaction. */
const TABLES = [
  'messages',
  'message_search',
  'message_edits',
  'message_user_actions',
  'conversations',
  'conversation_members',
  'users',
]

/**
 * Scenario 9: Query.sync for a viewer in 10,000 conversations against one in 10, each with five
 * changed after the token (the cost must follow the changes), and the rows one message to a
 * 1,000-member group writes (no per-member fan-out).
 */
export async function syncScenario(host: DatabaseHost, client: LoadClient): Promise<Figure[]> {
  const database = await createScenarioDatabase(host, 'sync')
  try {
    const fixture = await withClient(database.url, async (pg) => {
      const [big, small, sender] = await insertUsers(pg, 'sync', 3)
      const bigGroups = await insertGroups(pg, BIG, [big!, sender!])
      const smallGroups = await insertGroups(pg, SMALL, [small!, sender!])
      const crowd = await insertUsers(pg, 'crowd', GROUP - 1)
      const [crowded] = await insertGroups(pg, 1, [sender!, ...crowd])
      await pg.query('VACUUM ANALYZE')
      return { bigGroups, smallGroups, crowded: crowded! }
    })
    const [bigToken, smallToken, senderToken] = await Promise.all(['sync-0', 'sync-1', 'sync-2'].map(tokenFor))
    const parley = await startParleyProcess(database.url)
    try {
      const request = (call: GraphQLCall) => client.request({ endpoint: parley.endpoint, call })
      const since = async (token: string) =>
        ((await request({ token, query: TOKEN })) as { viewer: { syncToken: string } }).viewer.syncToken
      const [bigSince, smallSince] = [await since(bigToken!), await since(smallToken!)]
      let n = 0
      const send = (conversationId: number) =>
        request({
          token: senderToken!,
          query: SEND,
          variables: {
            input: {
              conversationId: encodeGlobalId('Conversation', conversationId),
              clientMessageId: `sync-${n++}`,
              content: { text: { text: 'changed' } },
            },
          },
        })
      // Spread over the big viewer's list, so no index order happens to favour them.
      for (let i = 0; i < CHANGED; i++) await send(fixture.bigGroups[Math.floor(((i + 0.5) * BIG) / CHANGED)]!)
      for (let i = 0; i < CHANGED; i++) await send(fixture.smallGroups[i]!)

      const bigCall = { token: bigToken!, query: SYNC, variables: { since: bigSince } }
      const smallCall = { token: smallToken!, query: SYNC, variables: { since: smallSince } }
      for (const call of [bigCall, smallCall]) {
        const batch = ((await request(call)) as { sync: { conversations: unknown[]; hasMore: boolean } }).sync
        if (batch.conversations.length !== CHANGED || batch.hasMore)
          throw new Error(`expected ${CHANGED} changed conversations, got ${batch.conversations.length}`)
      }
      const timed = (call: GraphQLCall) => client.latencies({ endpoint: parley.endpoint, count: SAMPLES, call })
      await timed(bigCall)
      await timed(smallCall)
      const [smallMs, bigMs] = await pairedMedians(
        RUNS,
        async () => median(await timed(smallCall)),
        async () => median(await timed(bigCall)),
      )

      await send(fixture.crowded)
      const rows = await withClient(database.url, async (pg) => {
        const { rows: xid } = await pg.query(
          `SELECT (sync_xid::text::bigint % 4294967296)::text AS xid FROM conversations WHERE id = $1`,
          [fixture.crowded],
        )
        let total = 0
        for (const table of TABLES)
          total += Number(
            (await pg.query(`SELECT count(*) AS n FROM ${table} WHERE xmin::text = $1`, [xid[0].xid])).rows[0].n,
          )
        return total
      })
      return [
        {
          scenario: `9 sync, ${CHANGED} changed, viewer in ${BIG.toLocaleString('en')} conversations`,
          metric: 'p50 ms',
          value: bigMs.toFixed(2),
          baseline: `${smallMs.toFixed(2)} (viewer in ${SMALL}, ${CHANGED} changed)`,
          ratio: bigMs / smallMs,
          target: '≤ 1.5',
          met: bigMs / smallMs <= 1.5,
        },
        {
          scenario: `9 one message to a ${GROUP.toLocaleString('en')}-member group: rows written`,
          metric: 'rows',
          value: String(rows),
          baseline: `${GROUP} (a row per member)`,
          ratio: rows / GROUP,
          target: 'no fan-out (≤ 5 rows)',
          met: rows <= 5,
          note: 'rows written by the send transaction (message, search document, conversation counters, the sender’s read position); nothing per member',
        },
      ]
    } finally {
      await parley.close()
    }
  } finally {
    await database.drop()
  }
}
