import pg from 'pg'
import type { GraphQLCall, LoadClient } from '../client.ts'
import { pairedMedians, throughput } from '../measure.ts'
import type { Figure } from '../support.ts'

const CONCURRENCY = 8
const RUNS = 5
// Calls per round, so that a round of each side lasts a few seconds.
const PARLEY_PAGES = 3_000
const RAW_PAGES = 15_000

/** The page a history query returns, as the raw baseline returns it: newest first from the cursor, with the sender's handle. */
const RAW_PAGE = `SELECT m.seq, m.content->>'text' AS text, u.handle
  FROM messages m LEFT JOIN users u ON u.id = m.sender_id
  WHERE m.conversation_id = $1 AND m.seq < $2 ORDER BY m.seq DESC LIMIT $3`

type Edge = { node: { seq: number; sender: { handle: string } | null; content: { text: string } | null } }
type RawRow = { seq: string; text: string; handle: string }

/**
 * Pages per second of one history page through Parley's HTTP API, `concurrency` clients over
 * keep-alive, against the same page as raw keyset SQL through `pg` at the same concurrency (one
 * named statement: the page and its senders' handles), in alternating rounds. Before timing, both
 * sides must return the same rows.
 */
export async function historyThroughput(opts: {
  client: LoadClient
  endpoint: string
  call: GraphQLCall
  databaseUrl: string
  conversationId: number
  beforeSeq: number
  page: number
  depth: string
}): Promise<Figure> {
  const { client, endpoint, call } = opts
  const pool = new pg.Pool({ connectionString: opts.databaseUrl, max: CONCURRENCY })
  try {
    const raw = () => pool.query<RawRow>({ name: 'bench_history_page', text: RAW_PAGE, values: [opts.conversationId, opts.beforeSeq, opts.page] })
    const edges: Edge[] = (await client.request({ endpoint, call })).conversation.messages.edges
    const parleyRows = edges.map((e) => `${e.node.seq} ${e.node.sender?.handle} ${e.node.content?.text}`).reverse()
    const rawRows = (await raw()).rows.map((r) => `${r.seq} ${r.handle} ${r.text}`)
    if (parleyRows.join('\n') !== rawRows.join('\n')) throw new Error('the raw page differs from the API page')
    const calls = Array.from({ length: PARLEY_PAGES }, () => call)
    const [parley, sql] = await pairedMedians(
      RUNS,
      () => client.throughput({ endpoint, concurrency: CONCURRENCY, calls }),
      () => throughput(RAW_PAGES, CONCURRENCY, raw),
    )
    return {
      scenario: `3 history pages of ${opts.page} at concurrency ${CONCURRENCY}, ${opts.depth} (HTTP)`,
      metric: 'pages/s',
      value: parley.toFixed(0),
      baseline: `${sql.toFixed(0)} (raw keyset SQL through pg, page + sender handles)`,
      ratio: parley / sql,
      target: '≥ 0.25',
      met: parley / sql >= 0.25,
    }
  } finally {
    await pool.end()
  }
}
