import { encodeGlobalId } from '../../src/domain/core/ids.ts'
import { insertReadersConversation } from '../setup.ts'
import type { LoadClient } from '../client.ts'
import { alternatingMedians } from '../measure.ts'
import { startParleyProcess, startPostGraphile } from '../server-process.ts'
import { openFixture, tokenFor, type DatabaseHost, type Figure } from '../support.ts'
import { MESSAGES, PAGE, README_HISTORY } from './history-depth.ts'
import { CONCURRENCY, described, historyThroughput } from './history-throughput.ts'
import { RUNS as SEND_RUNS, SENDERS, sendFixture } from './send-throughput.ts'

/** Parley's server pool (startParleyProcess's default); PostGraphile gets the same. */
const POOL = 40

/**
 * The README's history page as PostGraphile 5 (amber preset, server.mjs's smart tag) serves it: the
 * conversation by its row id, its messages newest first (the `seq DESC` ordering PostGraphile
 * generates for this table; with the conversation fixed it reads the primary key backwards), the
 * sender's handle through the tagged foreign key, the content as the jsonb it is stored as.
 */
const POSTGRAPHILE_HISTORY = `query History($id: BigInt!) {
  conversationByRowId(rowId: $id) { messagesByConversationId(first: ${PAGE}, orderBy: SEQ_DESC) {
    edges { node { seq userBySenderId { handle } content } }
    pageInfo { hasNextPage endCursor } } } }`

type PostGraphileEdge = { node: { seq: string; userBySenderId: { handle: string } | null; content: { text?: string } } }
const postGraphileRows = (data: unknown): string[] =>
  (
    data as { conversationByRowId: { messagesByConversationId: { edges: PostGraphileEdge[] } } }
  ).conversationByRowId.messagesByConversationId.edges.map(
    (e) => `${e.node.seq} ${e.node.userBySenderId?.handle} ${e.node.content.text}`,
  )

/** bench_send (send-throughput.ts's SEND_FUNCTION) as PostGraphile exposes it: a volatile function is a mutation. */
const POSTGRAPHILE_SEND = `mutation Send($input: BenchSendInput!) { benchSend(input: $input) { result } }`

// Since decision 0268 Parley runs on the Node 24 that the root npm ci installs: the same runtime on both sides.
/** What Parley has on in these rounds (issue 49 item 4: the ratios hold with this round's features). */
const FEATURES =
  'Parley with threads, the webhook outbox (no webhook registered), search indexing and streams on; push (no gateway) and retention off'
const NODES = `PostGraphile runs on Node 24 (it needs ≥ 22; bench/peers/postgraphile), Parley on ${process.version}`

/**
 * Scenario 11: PostGraphile 5 over the same tables, side by side with Parley and raw SQL (issue 19
 * states its targets against it). The newest history page of scenario 3's 1,000,000-message
 * conversation through PostGraphile, Parley (the README's query) and raw keyset SQL, alternating
 * rounds at concurrency 8 (history-throughput.ts); then 32 senders over 1,000 conversations, as
 * scenario 1: Parley's sendMessage against bench_send exposed by PostGraphile as a mutation.
 */
export async function peer(host: DatabaseHost, client: LoadClient): Promise<Figure[]> {
  return [...(await historyPeer(host, client)), ...(await sendPeer(host, client))]
}

async function historyPeer(host: DatabaseHost, client: LoadClient): Promise<Figure[]> {
  const database = await openFixture(host, `history_${MESSAGES}`, (url) => insertReadersConversation(url, MESSAGES))
  try {
    const conversationId = database.fixture
    // Each server started is stopped if the next one fails to start (the peer's install needs the npm registry).
    const postgraphile = await startPostGraphile(database.url, POOL)
    const parley = await startParleyProcess(database.url, { poolSize: POOL }).catch((error: unknown) => {
      postgraphile.close()
      throw error
    })
    try {
      const variables = { id: encodeGlobalId('Conversation', conversationId), before: null }
      const {
        parley: ours,
        raw,
        others,
        cpu,
      } = await historyThroughput({
        client,
        server: parley,
        call: { token: await tokenFor('reader-0'), query: README_HISTORY, variables },
        databaseUrl: database.url,
        conversationId,
        beforeSeq: MESSAGES + 1,
        page: PAGE,
        depth: 'newest page',
        // PostGraphile reads no token in this setup; the load client's header is ignored.
        others: [
          {
            server: postgraphile,
            call: { token: '', query: POSTGRAPHILE_HISTORY, variables: { id: String(conversationId) } },
            rows: postGraphileRows,
          },
        ],
      })
      const theirs = others[0]!
      const scenario = `11 history page of ${PAGE} at concurrency ${CONCURRENCY}, newest of ${MESSAGES.toLocaleString('en')} (HTTP)`
      const rawBaseline = `${raw.toFixed(0)} (raw keyset SQL through pg, page + sender handles)`
      const unchecked = `PostGraphile checks nothing (no auth in this setup), Parley the reader's membership, which favours PostGraphile; ${NODES}`
      return [
        {
          scenario: `${scenario}: PostGraphile 5`,
          metric: 'pages/s',
          value: theirs.rate.toFixed(0),
          baseline: rawBaseline,
          ratio: theirs.rate / raw,
          target: 'reported',
          met: true,
          note: `PostGraphile's CPU per page: ${described(theirs.cpu)} µs; ${unchecked}`,
        },
        {
          scenario: `${scenario}: Parley`,
          metric: 'pages/s',
          value: ours.toFixed(0),
          baseline: rawBaseline,
          ratio: ours / raw,
          target: '≥ 0.25',
          met: ours / raw >= 0.25,
          note: `CPU per page: ${cpu.note}`,
        },
        {
          scenario: `${scenario}: Parley against PostGraphile 5`,
          metric: 'pages/s',
          value: ours.toFixed(0),
          baseline: `${theirs.rate.toFixed(0)} (PostGraphile 5, the same rounds)`,
          ratio: ours / theirs.rate,
          target: '≥ 1.3',
          met: ours / theirs.rate >= 1.3,
          note: FEATURES,
        },
      ]
    } finally {
      postgraphile.close()
      await parley.close()
    }
  } finally {
    await database.drop()
  }
}

async function sendPeer(host: DatabaseHost, client: LoadClient): Promise<Figure[]> {
  const fixture = await sendFixture(host, client, 'peer_send', 1000)
  // The pool of the fixture's Parley (send-throughput.ts).
  const postgraphile = await startPostGraphile(fixture.databaseUrl, SENDERS + 8).catch(async (error: unknown) => {
    await fixture.close()
    throw error
  })
  try {
    const viaPostGraphile = async () => {
      const { perSecond } = await fixture.viaGraphQL(
        postgraphile.endpoint,
        ({ conversationId, senderId, clientMessageId, i }) => ({
          token: '',
          query: POSTGRAPHILE_SEND,
          variables: {
            input: {
              pConversation: String(conversationId),
              pSender: String(senderId),
              pClientMessageId: clientMessageId,
              pContent: { text: `hello ${i}` },
            },
          },
        }),
      )
      return perSecond
    }
    // Every second round in reverse order, so neither server always runs right after the same other run.
    const [ours, theirs, oneCall] = (await alternatingMedians(
      SEND_RUNS,
      [async () => (await fixture.viaParley()).perSecond, viaPostGraphile, () => fixture.viaFunction()],
      { reverseEveryOther: true },
    )) as [number, number, number]
    const scenario = `11 send throughput (1,000 conversations, ${SENDERS} senders, HTTP)`
    return [
      {
        scenario: `${scenario}: PostGraphile 5, bench_send as a mutation`,
        metric: 'msgs/s',
        value: theirs.toFixed(0),
        baseline: `${oneCall.toFixed(0)} (pg, bench_send called directly)`,
        ratio: theirs / oneCall,
        target: 'reported',
        met: true,
      },
      {
        scenario: `${scenario}: Parley against PostGraphile 5`,
        metric: 'msgs/s',
        value: ours.toFixed(0),
        baseline: `${theirs.toFixed(0)} (PostGraphile 5 + bench_send, the same rounds)`,
        ratio: ours / theirs,
        target: '≥ 1.0',
        met: ours / theirs >= 1,
        note: `${FEATURES}; bench_send checks membership and idempotency and writes the search document as Parley's send does, but publishes no event, which favours PostGraphile; ${NODES}`,
      },
    ]
  } finally {
    postgraphile.close()
    await fixture.close()
  }
}
