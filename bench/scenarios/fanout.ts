import { encodeGlobalId } from '../../src/domain/core/ids.ts'
import { insertGroups, insertUsers, withClient } from '../setup.ts'
import type { LoadClient } from '../client.ts'
import { percentile } from '../measure.ts'
import { startParleyProcess, type ParleyProcess } from '../server-process.ts'
import { createScenarioDatabase, tokenFor, type DatabaseHost, type Figure } from '../support.ts'

const MEMBERS = Number(process.env.BENCH_FANOUT_MEMBERS ?? 1000)
/** Idle subscriptions the memory figures hold open (each member subscribes IDLE / MEMBERS times). */
const IDLE = Number(process.env.BENCH_FANOUT_IDLE ?? 10_000)
/** Subscriptions per socket in the multiplexed memory phase. */
const PER_SOCKET = 10
const SENDS = 20
const EVENTS = `subscription Events($id: ID!) { conversationEvents(conversationId: $id, sincePts: 0) { __typename ... on MessageEvent { pts message { seq content { ... on TextContent { text } } } } } }`
const SEND = `mutation Send($input: SendMessageInput!) { sendMessage(input: $input) { message { seq } } }`

const KIB = 1024
const MIB = 2 ** 20
/** How long an idle server is watched for its heap to settle after the opening (see settledRss). */
const SETTLE_MS = 45_000

/** A memory-per-idle-subscription figure against the 30 KB ceiling. */
const memoryFigure = (layout: string, perSubscriptionKiB: number, note: string): Figure => ({
  scenario: `5 memory per idle subscription, ${IDLE.toLocaleString('en')} subscriptions ${layout} (server process RSS)`,
  metric: 'KiB',
  value: perSubscriptionKiB.toFixed(1),
  baseline: '30 KB (target ceiling)',
  ratio: (perSubscriptionKiB * KIB) / 30_000,
  target: '≤ 1 (≤ 30 KB)',
  met: perSubscriptionKiB * KIB <= 30_000,
  note,
})

/**
 * Live subscribers of one conversation on `parley`: `open` adds `count` subscriptions (one per
 * member from member `from` on, `perSocket` to a socket, each live once it has replayed the
 * conversation's first message, sincePts 0), `send` sends a message and answers each open
 * subscriber's delivery ms once all have it.
 */
export function liveConversation(client: LoadClient, parley: ParleyProcess, tokens: string[], conversationId: number) {
  const id = encodeGlobalId('Conversation', conversationId)
  const sendCall = (text: string) => ({
    token: tokens[0]!,
    query: SEND,
    variables: { input: { conversationId: id, clientMessageId: text, content: { text: { text } } } },
  })
  let first: Promise<unknown> | undefined
  return {
    /** Sends the first message (the one subscriptions replay), once. */
    sendFirst: () => (first ??= client.request({ endpoint: parley.endpoint, call: sendCall('first') })),
    async open(count: number, perSocket: number, from = 0) {
      await this.sendFirst()
      const calls = Array.from({ length: count }, (_, i) => ({
        token: tokens[(from + Math.floor(i / perSocket)) % tokens.length]!,
        query: EVENTS,
        variables: { id },
      }))
      await client.openSubscribers({ wsUrl: parley.endpoint.replace(/^http/, 'ws'), calls, perSocket })
    },
    send: (text: string) => client.deliver({ endpoint: parley.endpoint, text, send: sendCall(text) }),
  }
}

/**
 * Scenario 5: one send to a group of 1,000 members, all subscribed over graphql-ws; delivery latency
 * from the send to each subscriber's receipt (measured in the load client), against the same with a
 * single subscriber. And the server process's RSS: at rest, with 10,000 idle subscriptions (one
 * socket each, then 10 per socket, each phase in a fresh server so freed heap is not reused), and
 * during the sends.
 */
export async function fanout(host: DatabaseHost, client: LoadClient): Promise<Figure[]> {
  const database = await createScenarioDatabase(host, 'fanout')
  try {
    const { group, solo } = await withClient(database.url, async (client) => {
      const members = await insertUsers(client, 'member', MEMBERS)
      const [group] = await insertGroups(client, 1, members)
      const [solo] = await insertGroups(client, 1, [members[0]!])
      return { group: group!, solo: solo! }
    })
    const tokens = await Promise.all(Array.from({ length: MEMBERS }, (_, i) => tokenFor(`member-${i}`)))
    const rssMiB = (parley: ParleyProcess) => parley.rssBytes() / MIB

    /**
     * RSS once the idle server has let go of what its last work left behind. V8 collects its old
     * space when allocation reaches a limit, which an idle server never does; its memory reducer runs
     * a collection some seconds after the heap grew, once allocation is low (seen 25–30 s after 10,000
     * subscriptions opened: 550 → 399 MiB, near the live heap after a full GC). Read after SETTLE_MS idle.
     */
    const settledRss = async (parley: ParleyProcess) => {
      await new Promise((resolve) => setTimeout(resolve, SETTLE_MS))
      return rssMiB(parley)
    }

    /**
     * A fresh server: RSS at start, at rest once it has served its first request, then with IDLE idle
     * subscriptions `perSocket` per socket, both settled (settledRss; the figure as they opened goes in
     * the note). The first request loads what any first use does (Prisma's query compiler, the pool's
     * connection, compiled code: some 80 MiB), which is no subscription's.
     */
    const idleMemory = async (perSocket: number) => {
      const parley = await startParleyProcess(database.url)
      try {
        const started = rssMiB(parley)
        const live = liveConversation(client, parley, tokens, group)
        await live.sendFirst()
        const served = rssMiB(parley)
        const atRest = await settledRss(parley)
        await live.open(IDLE, perSocket)
        const opened = rssMiB(parley)
        const open = await settledRss(parley)
        await client.closeSubscribers()
        return {
          started,
          atRest,
          opened,
          open,
          perSubscriptionKiB: ((open - atRest) * KIB) / IDLE,
          openedKiB: ((opened - served) * KIB) / IDLE,
        }
      } finally {
        await parley.close()
      }
    }
    const single = await idleMemory(1)
    const multiplexed = await idleMemory(PER_SOCKET)
    // single: IDLE × (socket + subscription); multiplexed: IDLE / PER_SOCKET sockets + IDLE subscriptions.
    const sockets = IDLE - IDLE / PER_SOCKET
    const perSocketKiB = ((single.open - single.atRest - (multiplexed.open - multiplexed.atRest)) * KIB) / sockets
    const perExtraSubscriptionKiB = single.perSubscriptionKiB - perSocketKiB

    const parley = await startParleyProcess(database.url)
    try {
      const rssAtRest = rssMiB(parley)
      const latency = async (conversationId: number, subscribers: number) => {
        const live = liveConversation(client, parley, tokens, conversationId)
        await live.open(subscribers, 1)
        const latencies: number[] = []
        let rssPeak = 0
        for (let i = 0; i < SENDS; i++) {
          latencies.push(...(await live.send(`m-${subscribers}-${i}`)))
          rssPeak = Math.max(rssPeak, rssMiB(parley))
        }
        await client.closeSubscribers()
        return { p50: percentile(latencies, 50), p99: percentile(latencies, 99), rssPeak }
      }
      const one = await latency(solo, 1)
      const many = await latency(group, MEMBERS)
      return [
        {
          scenario: `5 one send to ${MEMBERS.toLocaleString('en')} subscribers (graphql-ws)`,
          metric: 'p99 delivery ms',
          value: `${many.p99.toFixed(1)} (p50 ${many.p50.toFixed(1)})`,
          baseline: `${one.p99.toFixed(1)} (1 subscriber; p50 ${one.p50.toFixed(1)})`,
          ratio: many.p99 / one.p99,
          target: 'reported',
          met: true,
          note: `server RSS at rest ${rssAtRest.toFixed(0)} MiB, at most ${many.rssPeak.toFixed(0)} MiB during the ${SENDS} sends to ${MEMBERS.toLocaleString('en')} subscribers`,
        },
        memoryFigure(
          'on as many sockets',
          single.perSubscriptionKiB,
          `server RSS ${single.started.toFixed(0)} MiB started, ${single.atRest.toFixed(0)} MiB at rest after its first request (settled), ${single.open.toFixed(0)} MiB with ${IDLE.toLocaleString('en')} idle subscriptions on as many sockets once settled (${single.opened.toFixed(0)} MiB, ${single.openedKiB.toFixed(1)} KiB each, read as they opened)`,
        ),
        memoryFigure(
          `${PER_SOCKET} per socket`,
          multiplexed.perSubscriptionKiB,
          `server RSS ${multiplexed.started.toFixed(0)} MiB started, ${multiplexed.atRest.toFixed(0)} MiB at rest after its first request (settled), ${multiplexed.open.toFixed(0)} MiB with ${IDLE.toLocaleString('en')} subscriptions on ${(IDLE / PER_SOCKET).toLocaleString('en')} sockets once settled (${multiplexed.opened.toFixed(0)} MiB, ${multiplexed.openedKiB.toFixed(1)} KiB each, read as they opened); from both phases a socket costs about ${perSocketKiB.toFixed(1)} KiB and a subscription on it about ${perExtraSubscriptionKiB.toFixed(1)} KiB`,
        ),
      ]
    } finally {
      await parley.close()
    }
  } finally {
    await database.drop()
  }
}
