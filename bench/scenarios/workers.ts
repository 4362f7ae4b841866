import { encodeGlobalId } from '../../src/domain/core/ids.ts'
import { availableParallelism } from 'node:os'
import { insertReadersConversation } from '../setup.ts'
import type { LoadClient } from '../client.ts'
import { alternatingMedians } from '../measure.ts'
import { startParleyProcess } from '../server-process.ts'
import { openFixture, tokenFor, type DatabaseHost, type Figure } from '../support.ts'
import { CONCURRENCY, historyThroughput, parleyPageRows } from './history-throughput.ts'
import { MESSAGES, README_HISTORY } from './history-depth.ts'
import { RUNS, SENDERS, sendFixture } from './send-throughput.ts'

/** The measured worker count: 2 on this machine; `auto` (one per CPU, as the server resolves it) or a number on a bigger one. */
const WORKERS = process.env.BENCH_WORKERS ?? '2'
const COUNT = WORKERS === 'auto' ? availableParallelism() : Number(WORKERS)
const SEND_GROUPS = 200
/** The WORKERS=1 server's connections; each of the N workers gets its share, so neither side has more in all. */
const HISTORY_POOL = 16
const SEND_POOL = SENDERS + 8
const share = (pool: number) => Math.ceil(pool / COUNT)
const startWorkers = (databaseUrl: string, pool: number) =>
  startParleyProcess(databaseUrl, { poolSize: share(pool), env: { WORKERS } })

const figure = (what: string, metric: string, many: number, one: number): Figure => ({
  scenario: `13 every core: ${what}, WORKERS=${WORKERS} (${COUNT} processes) against WORKERS=1`,
  metric,
  value: many.toFixed(0),
  baseline: `${one.toFixed(0)} (WORKERS=1)`,
  ratio: many / one,
  target: 'reported (~1.2 on 2 shared cores)',
  met: true,
})

/**
 * Scenario 13 (issue 49, item 1): history pages (the README's page of 50, newest page, over the
 * history scenario's conversation, at concurrency 8) and sends (32 senders over 200 groups) through
 * a server started with WORKERS=BENCH_WORKERS (default 2) against one with WORKERS=1, in alternating
 * rounds of the same run, each side with the same number of database connections in all. The pages
 * reuse history-throughput.ts (the N-worker server measured, the single process as its "other"
 * server); the sends reuse send-throughput.ts's fixture.
 */
export async function workers(host: DatabaseHost, client: LoadClient): Promise<Figure[]> {
  const database = await openFixture(host, `history_${MESSAGES}`, (url) => insertReadersConversation(url, MESSAGES))
  let pages: { many: number; one: number }
  try {
    const conversationId = database.fixture
    const call = {
      token: await tokenFor('reader-0'),
      query: README_HISTORY,
      variables: { id: encodeGlobalId('Conversation', conversationId), before: null },
    }
    const single = await startParleyProcess(database.url, { poolSize: HISTORY_POOL })
    const measured = await startWorkers(database.url, HISTORY_POOL)
    try {
      const result = await historyThroughput({
        client,
        server: measured,
        call,
        databaseUrl: database.url,
        conversationId,
        beforeSeq: MESSAGES + 1,
        page: 50,
        depth: 'newest page',
        others: [{ server: single, call, rows: parleyPageRows }],
      })
      pages = { many: result.parley, one: result.others[0]!.rate }
    } finally {
      await measured.close()
      await single.close()
    }
  } finally {
    await database.drop()
  }

  const fixture = await sendFixture(host, client, 'workers_send', SEND_GROUPS)
  try {
    const many = await startWorkers(fixture.databaseUrl, SEND_POOL)
    try {
      const [one, n] = (await alternatingMedians(
        RUNS,
        [
          async () => (await fixture.viaParley()).perSecond,
          async () => (await fixture.viaParley(undefined, undefined, many)).perSecond,
        ],
        { reverseEveryOther: true },
      )) as [number, number]
      return [
        figure(
          `history pages of 50 at concurrency ${CONCURRENCY}, newest page (HTTP)`,
          'pages/s',
          pages.many,
          pages.one,
        ),
        figure(`sends over ${SEND_GROUPS} groups, ${SENDERS} senders (HTTP)`, 'msgs/s', n, one),
      ]
    } finally {
      await many.close()
    }
  } finally {
    await fixture.close()
  }
}
