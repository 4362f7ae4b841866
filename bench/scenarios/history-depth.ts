import pg from 'pg'
import { encodeGlobalId } from '../../src/domain/core/ids.ts'
import { insertReadersConversation, withClient } from '../setup.ts'
import type { LoadClient } from '../client.ts'
import { latencies, median, pairedMedians } from '../measure.ts'
import { startBareServer, startParleyProcess } from '../server-process.ts'
import { openFixture, tokenFor, type DatabaseHost, type Figure } from '../support.ts'
import { CONCURRENCY, described, historyThroughput, parleyPageRows } from './history-throughput.ts'

export const MESSAGES = Number(process.env.BENCH_HISTORY_MESSAGES ?? 1_000_000)
export const PAGE = 50
const SAMPLES = 40
const RUNS = 5

const HISTORY = `query History($id: ID!, $before: String) {
  conversation(id: $id) { messages(last: ${PAGE}, before: $before) {
    edges { cursor node { seq sentAt sender { handle } content { ... on TextContent { text } } } }
    pageInfo { hasPreviousPage hasNextPage } } } }`

/** The README's history query: sender handle and text content. */
export const README_HISTORY = `query History($id: ID!, $before: String) {
  conversation(id: $id) { messages(last: ${PAGE}, before: $before) {
    edges { node { seq sender { handle } content { ... on TextContent { text } } } }
    pageInfo { hasPreviousPage startCursor } } } }`

/**
 * Scenario 3: a page of 50 at depth 1,000,000 of a 1M-message conversation, through HTTP GraphQL;
 * baselines: the newest page (depth 0) through the same API, and OFFSET pagination (raw SQL) at the same depth.
 * Then pages per second at concurrency 8 of the README's query, newest page and deepest page, each
 * against raw keyset SQL (history-throughput.ts).
 */
export async function historyDepth(host: DatabaseHost, client: LoadClient): Promise<Figure[]> {
  const database = await openFixture(host, `history_${MESSAGES}`, (url) => insertReadersConversation(url, MESSAGES))
  try {
    const conversationId = database.fixture
    const token = await tokenFor('reader-0')
    const parley = await startParleyProcess(database.url)
    const reader = await withClient(database.url, async (pg) =>
      Number((await pg.query(`SELECT id FROM users WHERE handle = 'reader-0'`)).rows[0].id),
    )
    const floor = await startBareServer('bare-history.ts', [database.url, String(conversationId), String(reader)])
    const pool = new pg.Pool({ connectionString: database.url, max: 2 })
    try {
      const id = encodeGlobalId('Conversation', conversationId)
      const deepCursor = Buffer.from(`seq:${PAGE + 1}`).toString('base64url') // the page 1..50, under 1M newer messages
      // Latencies measured in the load client; the first call checks that the deep page is the oldest one.
      const pages = (count: number, before: string | null) =>
        client.latencies({
          endpoint: parley.endpoint,
          count,
          call: { token, query: HISTORY, variables: { id, before } },
        })
      const check = (await client.request({
        endpoint: parley.endpoint,
        call: { token, query: HISTORY, variables: { id, before: deepCursor } },
      })) as { conversation: { messages: { edges: { node: { seq: number } }[] } } }
      if (check.conversation.messages.edges[0]!.node.seq !== 1) throw new Error('deep page does not start at seq 1')
      // Rounds of SAMPLES requests, newest page and deep page alternating, so drift hits both alike.
      const [shallow, deep] = await pairedMedians(
        RUNS,
        async () => median(await pages(SAMPLES, null)),
        async () => median(await pages(SAMPLES, deepCursor)),
      )
      const offsetSql = `SELECT conversation_id, seq, content, sent_at FROM messages WHERE conversation_id = $1 ORDER BY seq DESC OFFSET $2 LIMIT ${PAGE}`
      await pool.query(offsetSql, [conversationId, MESSAGES - PAGE])
      const offset = median(
        await latencies(Math.min(SAMPLES, 10), () => pool.query(offsetSql, [conversationId, MESSAGES - PAGE])),
      )
      const rates = async (before: string | null, beforeSeq: number, depth: string, withFloor = false) => {
        const call = { token, query: README_HISTORY, variables: { id, before } }
        // The floor answers the same query with the same JSON (bench/bare-history.ts).
        const others = withFloor ? [{ server: floor, call, rows: parleyPageRows }] : []
        return historyThroughput({
          client,
          server: parley,
          call,
          databaseUrl: database.url,
          conversationId,
          beforeSeq,
          page: PAGE,
          depth,
          others,
        })
      }
      const newest = await rates(null, MESSAGES + 1, 'newest page', true)
      const deepest = await rates(deepCursor, PAGE + 1, `depth ${MESSAGES.toLocaleString('en')}`)
      const bare = newest.others[0]!
      return [
        {
          scenario: `3 history page of ${PAGE} at depth ${MESSAGES.toLocaleString('en')} (HTTP)`,
          metric: 'p50 ms',
          value: deep.toFixed(2),
          baseline: `${shallow.toFixed(2)} (same API, depth 0)`,
          ratio: deep / shallow,
          target: '≤ 1.3',
          met: deep / shallow <= 1.3,
        },
        {
          scenario: `3 history page of ${PAGE} at depth ${MESSAGES.toLocaleString('en')} vs OFFSET`,
          metric: 'speed-up',
          value: `${deep.toFixed(2)} ms`,
          baseline: `${offset.toFixed(1)} ms (raw SQL OFFSET ${MESSAGES - PAGE})`,
          ratio: offset / deep,
          target: '≥ 50× faster',
          met: offset / deep >= 50,
        },
        newest.rate,
        deepest.rate,
        newest.cpu,
        {
          scenario: `3 history pages of ${PAGE} at concurrency ${CONCURRENCY}, newest page: Parley's statement (store/history.ts) through node:http, no GraphQL server`,
          metric: 'pages/s',
          value: bare.rate.toFixed(0),
          baseline: `${newest.raw.toFixed(0)} (raw keyset SQL through pg, page + sender handles)`,
          ratio: bare.rate / newest.raw,
          target: 'reported',
          met: true,
          note: `CPU per page: ${described(bare.cpu)} µs; the floor under Parley's own page, in the same rounds: Parley reached ${(newest.parley / bare.rate).toFixed(2)} of its ratio`,
        },
      ]
    } finally {
      floor.close()
      await pool.end()
      await parley.close()
    }
  } finally {
    await database.drop()
  }
}
