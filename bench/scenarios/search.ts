import pg from 'pg'
import type { Db } from '../../src/db/client.ts'
import { messageMatch } from '../../src/domain/search/search.ts'
import { parseSearchQuery } from '../../src/domain/search/query.ts'
import { encodeGlobalId } from '../../src/domain/core/ids.ts'
import { visibleTo, type Reader } from '../../src/store/fragments.ts'
import { visibleMatchesSql } from '../../src/store/search.ts'
import { Prisma } from '../../src/store/sql.ts'
import type { LoadClient } from '../client.ts'
import { latencies, median, pairedMedians } from '../measure.ts'
import { CONVERSATIONS, MESSAGES, openSearchFixture, PLANTED, VIEWER_CONVERSATIONS } from '../search-fixture.ts'
import { startParleyProcess } from '../server-process.ts'
import { startParley, tokenFor, type DatabaseHost, type Figure } from '../support.ts'

const SAMPLES = 20
const BASELINE_SAMPLES = 4
const RUNS = 3
const SEND_SAMPLES = 150
const count = (n: number) => n.toLocaleString('en')

const SEARCH = `query Search($query: String!) { searchMessages(query: $query, first: 20) {
  edges { snippet highlights { start length } node { id seq sentAt sender { handle } content { ... on TextContent { text } } } }
  pageInfo { hasNextPage endCursor } } }`
const SEND = `mutation Send($input: SendMessageInput!) { sendMessage(input: $input) { message { seq } } }`

/** The same search as ILIKE '%…%' (every word) over each of the reader's conversations, under the shared visibility rule. */
const ilikeSql = (reader: Reader, words: string[]) => Prisma.sql`
  SELECT v.* FROM conversation_members cm CROSS JOIN LATERAL (
    SELECT m.conversation_id, m.seq, m.sent_at, m.sender_id, m.content FROM messages m
    WHERE m.conversation_id = cm.conversation_id AND ${visibleTo(reader)} AND m.status <> 'RECALLED'
      AND ${Prisma.join(
        words.map((w) => Prisma.sql`m.content->>'text' ILIKE ${`%${w}%`}`),
        ' AND ',
      )}) v
  WHERE cm.user_id = ${reader.userId} AND cm.left_at IS NULL
  ORDER BY v.sent_at DESC, v.conversation_id DESC, v.seq DESC LIMIT 20`

/**
 * Scenario 7: searchMessages over 1,000,000 messages (bench/search-fixture.ts) for a viewer in 100 of
 * 1,000 conversations, through HTTP GraphQL; baseline: the same search as ILIKE in raw SQL. Also the
 * plans (the text match must come from the GIN index, never a sequential scan) and what writing the
 * search document adds to a send (searchIndexing on against off, send by send).
 */
export async function search(host: DatabaseHost, client: LoadClient): Promise<Figure[]> {
  const database = await openSearchFixture(host)
  // Searches are timed against the server as npm start runs it; the in-process one explains plans
  // and switches search indexing off and on for the send-cost comparison.
  const server = await startParleyProcess(database.url)
  const parley = await startParley(database.url)
  const pool = new pg.Pool({ connectionString: database.url, max: 2 })
  const reader = { userId: database.viewerId }
  try {
    const token = await tokenFor('searcher-0')
    const figures: Figure[] = []
    for (const [label, query] of [
      ['2-character Chinese', '请假'],
      ['Latin word', 'budget'],
      ['two words', PLANTED.budget],
    ] as const) {
      const call = { token, query: SEARCH, variables: { query } }
      const baselineSql = ilikeSql(reader, query.split(' '))
      const baseline = () => pool.query(baselineSql.text, baselineSql.values)
      // Both must find the same newest 20 before either is timed.
      const found = (await client.request({ endpoint: server.endpoint, call })) as {
        searchMessages: { edges: { node: { id: string } }[] }
      }
      const expected = (await baseline()).rows.map((r) => encodeGlobalId('Message', `${r.conversation_id}:${r.seq}`))
      if (JSON.stringify(found.searchMessages.edges.map((e) => e.node.id)) !== JSON.stringify(expected)) {
        throw new Error(`search "${query}" and its ILIKE baseline disagree`)
      }
      const [ilike, searched] = await pairedMedians(
        RUNS,
        async () => median(await latencies(BASELINE_SAMPLES, baseline)),
        async () => median(await client.latencies({ endpoint: server.endpoint, count: SAMPLES, call })),
      )
      const scenario = `7 searchMessages "${query}" (${label}), ${count(MESSAGES)} messages, viewer in ${VIEWER_CONVERSATIONS} of ${count(CONVERSATIONS)} conversations (HTTP)`
      figures.push(
        p50Figure(scenario, searched, ilike, "raw SQL ILIKE over the viewer's conversations", { fasterBy: 20 }),
      )
    }
    await checkGenericPlan(parley.db, pool, reader)
    figures.push(await checkPlans(parley.db, reader))
    figures.push(await sendCost(client, parley, token, database.conversationId))
    return figures
  } finally {
    await pool.end()
    await server.close()
    await parley.close()
    await database.drop()
  }
}

/**
 * EXPLAIN of the store's own statement, matched as searchMessages matches: the text match from a GIN
 * index (the documents' for CJK, the per-conversation words' for a word), no sequential scan of
 * messages or documents.
 */
async function checkPlans(db: Db, reader: Reader): Promise<Figure> {
  const queries = ['假', '请假', 'budget']
  const indexed: string[] = []
  for (const query of queries) {
    const sql = await searchStatement(db, reader, query)
    const rows = await db.$queryRaw<{ 'QUERY PLAN': string }[]>(Prisma.sql`EXPLAIN (ANALYZE, COSTS OFF) ${sql}`)
    const plan = rows.map((r) => r['QUERY PLAN']).join('\n')
    console.error(`[bench]   plan of "${query}":\n${plan}`)
    if (
      /Bitmap Index Scan on message_search_(document|words)_idx/.test(plan) &&
      !/Seq Scan on (messages|message_search)\b/.test(plan)
    )
      indexed.push(query)
  }
  return {
    scenario: `7 search plans at ${count(MESSAGES)} messages (${queries.join(', ')})`,
    metric: 'from the GIN index',
    value: `${indexed.length} of ${queries.length}`,
    baseline: 'no sequential scan of messages',
    ratio: indexed.length / queries.length,
    target: 'all',
    met: indexed.length === queries.length,
  }
}

/** The statement searchMessages runs for `query` (first page of 20). */
const searchStatement = async (db: Db, reader: Reader, query: string) =>
  visibleMatchesSql(reader, {
    match: await messageMatch(db, reader, parseSearchQuery(query), null),
    conversationId: null,
    senderId: null,
    kinds: null,
    sentAfter: null,
    sentBefore: null,
    after: null,
    limit: 21,
  })

/**
 * Plan guard: one connection keeps the generic plan of each search statement whoever calls it
 * first. PostgreSQL plans a named statement's first five calls with their values and keeps the
 * generic plan only if it looks no dearer than those did; with the query's text as a parameter,
 * a rare match ("budget review", 请假) looked cheaper, so the statement was planned again on every
 * call for every query on that connection (decision 0220).
 */
async function checkGenericPlan(db: Db, pool: pg.Pool, reader: Reader): Promise<void> {
  const client = await pool.connect()
  try {
    for (const [statement, queries] of [
      ['words', [PLANTED.budget, 'budget']],
      ['documents', ['请假', '假']],
    ] as const) {
      const name = `search-plan-guard-${statement}`
      for (const query of queries) {
        const stmt = await searchStatement(db, reader, query)
        for (let i = 0; i < 6; i++) await client.query({ name, text: stmt.text, values: stmt.values })
        const { rows } = await client.query<{ custom: string; generic: string }>(
          `SELECT custom_plans AS custom, generic_plans AS generic FROM pg_prepared_statements WHERE name = $1`,
          [name],
        )
        if (Number(rows[0]!.generic) === 0)
          throw new Error(
            `the search statement over the ${statement} is planned on every call after "${query}" (${rows[0]!.custom} custom plans, no generic one)`,
          )
      }
      await client.query(`DEALLOCATE "${name}"`)
    }
  } finally {
    client.release()
  }
}

/** A lone sender's send with search documents on and off, alternating send by send. */
async function sendCost(
  client: LoadClient,
  parley: Awaited<ReturnType<typeof startParley>>,
  token: string,
  conversationId: number,
): Promise<Figure> {
  const settings = parley.app.settings
  const conversation = encodeGlobalId('Conversation', conversationId)
  let n = 0
  const sendOnce = async (indexing: boolean) => {
    settings.searchIndexing = indexing
    // Mixed text like the fixture's, none of the searched words: sends with indexing off must not change what the searches find.
    const text = `明天上午开会讨论 roadmap notes ${++n}`
    const calls = [
      {
        token,
        query: SEND,
        variables: {
          input: {
            conversationId: conversation,
            clientMessageId: `search-send-${process.pid}-${n}`,
            content: { text: { text } },
          },
        },
      },
    ]
    return 1000 / (await client.throughput({ endpoint: parley.endpoint, concurrency: 1, calls }))
  }
  const on: number[] = []
  const off: number[] = []
  for (let i = 0; i < 20; i++) await sendOnce(i % 2 === 0)
  for (let i = 0; i < SEND_SAMPLES; i++) {
    on.push(await sendOnce(true))
    off.push(await sendOnce(false))
  }
  settings.searchIndexing = true
  const scenario = `7 send latency with the search document (lone sender, ${count(MESSAGES)} indexed messages)`
  return p50Figure(scenario, median(on), median(off), 'search indexing off', { atMost: 1.2 })
}

/** A row comparing two p50 latencies: the measured one at most `atMost` times the baseline, or `fasterBy` times faster. */
function p50Figure(
  scenario: string,
  measured: number,
  baseline: number,
  note: string,
  target: { atMost: number } | { fasterBy: number },
): Figure {
  const ratio = 'atMost' in target ? measured / baseline : baseline / measured
  const met = 'atMost' in target ? ratio <= target.atMost : ratio >= target.fasterBy
  const goal = 'atMost' in target ? `≤ ${target.atMost}` : `≥ ${target.fasterBy}× faster`
  return {
    scenario,
    metric: 'p50 ms',
    value: measured.toFixed(2),
    baseline: `${baseline.toFixed(2)} (${note})`,
    ratio,
    target: goal,
    met,
  }
}
