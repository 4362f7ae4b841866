import { encodeGlobalId } from '../../src/domain/core/ids.ts'
import { insertGroups, insertMessages, insertUsers, withClient } from '../setup.ts'
import type { GraphQLCall, LoadClient } from '../client.ts'
import { alternatingSamples, median } from '../measure.ts'
import { startParleyProcess } from '../server-process.ts'
import { openFixture, tokenFor, type DatabaseHost, type Figure } from '../support.ts'
import { PAGE, README_HISTORY } from './history-depth.ts'
import { CONCURRENCY } from './history-throughput.ts'

const MESSAGES = Number(process.env.BENCH_HISTORY_THREADS_MESSAGES ?? 200_000)
const RUNS = 5
const PAGES_PER_ROUND = 2_000

/** The README's history query, and each root's thread summary as a client showing threads asks it. */
const WITH_SUMMARIES = README_HISTORY.replace(
  'content { ... on TextContent { text } }',
  'content { ... on TextContent { text } } thread { replyCount lastReplyAt }',
)

/**
 * Two conversations of `MESSAGES` messages by reader-0: one without threads, and one where 30% of
 * the messages are replies not sent alsoInConversation (seqs ending in 3, 6 and 9 answer the
 * message ending in 1 before them, which has its thread row), as decision 0282 measured its statement.
 */
async function buildFixture(url: string): Promise<{ plain: number; threads: number }> {
  return withClient(url, async (pg) => {
    const [reader] = await insertUsers(pg, 'reader', 1)
    const [plain, threads] = (await insertGroups(pg, 2, [reader!])) as [number, number]
    for (const id of [plain, threads]) await insertMessages(pg, id, reader!, MESSAGES)
    await pg.query(
      `UPDATE messages SET thread_root_seq = seq - seq % 10 + 1, in_conversation = false
       WHERE conversation_id = $1 AND seq % 10 IN (3, 6, 9)`,
      [threads],
    )
    await pg.query(
      `INSERT INTO message_threads (conversation_id, root_seq, reply_count, last_reply_seq, last_reply_at)
       SELECT m.conversation_id, m.thread_root_seq, count(*), max(m.seq), max(m.sent_at) FROM messages m
       WHERE m.conversation_id = $1 AND m.thread_root_seq IS NOT NULL GROUP BY 1, 2`,
      [threads],
    )
    await pg.query('VACUUM ANALYZE')
    return { plain, threads }
  })
}

type Page = { conversation: { messages: { edges: { node: { seq: number } }[] } } }

/**
 * Issue 44's cost: pages per second of the README's history query at concurrency 8 through HTTP,
 * against the server as `npm start` runs it, on a conversation with 30% of its messages in threads
 * against one without threads, newest page and deepest page, in alternating rounds (every second
 * round reversed). And what asking each root's thread summary adds to the newest page (reported).
 */
export async function historyThreads(host: DatabaseHost, client: LoadClient): Promise<Figure[]> {
  const database = await openFixture(host, `history_threads_${MESSAGES}`, buildFixture)
  try {
    const { plain, threads } = database.fixture
    const token = await tokenFor('reader-0')
    const parley = await startParleyProcess(database.url)
    try {
      // The deepest full page of each: before the 51st message the history shows.
      const deepest = await withClient(database.url, async (pg) =>
        Promise.all(
          [plain, threads].map(async (id) => {
            const { rows } = await pg.query(
              'SELECT seq FROM messages WHERE conversation_id = $1 AND in_conversation ORDER BY seq OFFSET $2 LIMIT 1',
              [id, PAGE],
            )
            return Buffer.from(`seq:${rows[0].seq}`).toString('base64url')
          }),
        ),
      )
      const call = (id: number, before: string | null, query = README_HISTORY): GraphQLCall => ({
        token,
        query,
        variables: { id: encodeGlobalId('Conversation', id), before },
      })
      const calls = {
        plainNewest: call(plain, null),
        threadsNewest: call(threads, null),
        plainDeep: call(plain, deepest[0]!),
        threadsDeep: call(threads, deepest[1]!),
        summaries: call(threads, null, WITH_SUMMARIES),
      }
      for (const [name, c] of Object.entries(calls)) {
        const seqs = ((await client.request({ endpoint: parley.endpoint, call: c })) as Page).conversation.messages
          .edges
        if (seqs.length !== PAGE) throw new Error(`${name}: ${seqs.length} messages, not ${PAGE}`)
        if (c !== calls.plainNewest && c !== calls.plainDeep && seqs.some((e) => [3, 6, 9].includes(e.node.seq % 10)))
          throw new Error(`${name}: a reply in the history`)
      }
      const round = (c: GraphQLCall) => () =>
        client.throughput({
          endpoint: parley.endpoint,
          concurrency: CONCURRENCY,
          calls: Array(PAGES_PER_ROUND).fill(c),
        })
      const samples = await alternatingSamples(RUNS, Object.values(calls).map(round), { reverseEveryOther: true })
      const [plainNewest, threadsNewest, plainDeep, threadsDeep, summaries] = samples.map(median)
      const size = `${MESSAGES.toLocaleString('en')} messages`
      const figure = (where: string, value: number, baseline: number): Figure => ({
        scenario: `44 history pages of ${PAGE} at concurrency ${CONCURRENCY}, ${where}, ${size} with 30% in threads (HTTP)`,
        metric: 'pages/s',
        value: value.toFixed(0),
        baseline: `${baseline.toFixed(0)} (the same query, ${size} without threads)`,
        ratio: value / baseline,
        target: '≥ 0.91 (within 1.1×)',
        met: value / baseline >= 1 / 1.1,
      })
      return [
        figure('newest page', threadsNewest!, plainNewest!),
        figure('deepest page', threadsDeep!, plainDeep!),
        {
          ...figure('newest page with each root’s thread { replyCount lastReplyAt }', summaries!, plainNewest!),
          target: 'reported',
          met: true,
        },
      ]
    } finally {
      await parley.close()
    }
  } finally {
    await database.drop()
  }
}
