import { encodeGlobalId } from '../../src/ids.ts'
import { insertGroups, insertUsers, withClient } from '../setup.ts'
import type { LoadClient } from '../client.ts'
import { percentile } from '../measure.ts'
import { startParleyProcess } from '../server-process.ts'
import { createScenarioDatabase, tokenFor, type DatabaseHost, type Figure } from '../support.ts'

const MEMBERS = Number(process.env.BENCH_FANOUT_MEMBERS ?? 1000)
const SENDS = 20
const EVENTS = `subscription Events($id: ID!) { conversationEvents(conversationId: $id, sincePts: 0) { __typename ... on MessageEvent { pts message { seq content { ... on TextContent { text } } } } } }`
const SEND = `mutation Send($input: SendMessageInput!) { sendMessage(input: $input) { message { seq } } }`


/**
 * Scenario 5: one send to a group of 1,000 members, all subscribed over graphql-ws; delivery latency
 * from the send to each subscriber's receipt (measured in the load client), against the same with a
 * single subscriber. Also the server process's RSS per idle subscription, at rest and under
 * the scenario.
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
    const parley = await startParleyProcess(database.url)
    const wsUrl = parley.endpoint.replace(/^http/, 'ws')
    const rssMiB = () => parley.rssBytes() / 2 ** 20
    const rssAtRest = rssMiB()
    try {
      const measure = async (conversationId: number, subscribers: number) => {
        const id = encodeGlobalId('Conversation', conversationId)
        const rssBefore = rssMiB()
        await client.openSubscribers({ wsUrl, calls: tokens.slice(0, subscribers).map((token) => ({ token, query: EVENTS, variables: { id } })) })
        const send = (text: string) =>
          client.deliver({ endpoint: parley.endpoint, text, send: { token: tokens[0]!, query: SEND, variables: { input: { conversationId: id, clientMessageId: text, content: { text: { text } } } } } })
        // The conversation is new and subscriptions start at sincePts 0, so each gets the probe by replay
        // or live; once every one has it, all are live.
        await send(`probe-${subscribers}`)
        const perSubscriptionKiB = ((rssMiB() - rssBefore) * 1024) / subscribers
        const rssUnderLoad = rssMiB()
        const latencies: number[] = []
        for (let i = 0; i < SENDS; i++) latencies.push(...(await send(`m-${subscribers}-${i}`)))
        await client.closeSubscribers()
        return { p50: percentile(latencies, 50), p99: percentile(latencies, 99), perSubscriptionKiB, rssUnderLoad }
      }
      const single = await measure(solo, 1)
      const many = await measure(group, MEMBERS)
      return [
        {
          scenario: `5 one send to ${MEMBERS.toLocaleString('en')} subscribers (graphql-ws)`,
          metric: 'p99 delivery ms',
          value: `${many.p99.toFixed(1)} (p50 ${many.p50.toFixed(1)})`,
          baseline: `${single.p99.toFixed(1)} (1 subscriber; p50 ${single.p50.toFixed(1)})`,
          ratio: many.p99 / single.p99,
          target: 'reported',
          met: true,
        },
        {
          scenario: '5 memory per idle subscription (server process RSS)',
          metric: 'KiB',
          value: many.perSubscriptionKiB.toFixed(1),
          baseline: '30 KB (target ceiling)',
          ratio: many.perSubscriptionKiB / (30_000 / 1024),
          target: '≤ 1 (≤ 30 KB)',
          met: many.perSubscriptionKiB * 1024 <= 30_000,
          note: `server RSS at rest ${rssAtRest.toFixed(0)} MiB, with ${MEMBERS} idle subscriptions ${many.rssUnderLoad.toFixed(0)} MiB`,
        },
      ]
    } finally {
      await parley.close()
    }
  } finally {
    await database.drop()
  }
}
