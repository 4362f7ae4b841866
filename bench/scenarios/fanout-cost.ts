import pg from 'pg'
import { encodeGlobalId } from '../../src/domain/core/ids.ts'
import { withDatabaseCpu } from '../cpu.ts'
import { insertGroups, insertUsers, withClient } from '../setup.ts'
import type { LoadClient } from '../client.ts'
import { startParleyProcess } from '../server-process.ts'
import { createScenarioDatabase, tokenFor, type DatabaseHost, type Figure } from '../support.ts'

/** Members besides the sender, each holding one stream in the subscribed phase. */
const SUBSCRIBERS = 32
const SENDS = Number(process.env.BENCH_FANOUT_COST_SENDS ?? 200)
/** What a chat client shows of a message (decision 0271 reads it once per event for all subscribers). */
const EVENTS = `subscription Events($id: ID!) { conversationEvents(conversationId: $id, sincePts: 0) { __typename ... on MessageEvent {
  kind pts message { id seq sentAt sender { id handle displayName } content { ... on TextContent { text } }
  quoted { id } reactions { emoji count viewerReacted } viewerState { favorite } conversation { id title } } } } }`
const SEND = `mutation Send($input: SendMessageInput!) { sendMessage(input: $input) { message { seq } } }`

/**
 * Scenario 12 (issue 49, item 0): SENDS sequential sends into one group of 33, with no subscriber
 * and then with all 32 other members subscribed over graphql-ws (each send awaited until every
 * subscriber has it), in one server process and one run: messages per second, and PostgreSQL's CPU
 * per message read from /proc for its backends (bench/cpu.ts). Target: the database's CPU per
 * message with 32 subscribers at most 1.5× that with none. The ejabberd comparison of the issue is
 * not part of it.
 */
export async function fanoutCost(host: DatabaseHost, client: LoadClient): Promise<Figure[]> {
  const database = await createScenarioDatabase(host, 'fanout_cost')
  const connection = new pg.Client({ connectionString: database.url })
  await connection.connect()
  try {
    const group = await withClient(database.url, async (client) => {
      const members = await insertUsers(client, 'member', SUBSCRIBERS + 1)
      return (await insertGroups(client, 1, members))[0]!
    })
    const id = encodeGlobalId('Conversation', group)
    const tokens = await Promise.all(Array.from({ length: SUBSCRIBERS + 1 }, (_, i) => tokenFor(`member-${i}`)))
    const send = (text: string) => ({
      token: tokens[0]!,
      query: SEND,
      variables: { input: { conversationId: id, clientMessageId: text, content: { text: { text } } } },
    })
    const dbName = new URL(database.url).pathname.slice(1)
    const parley = await startParleyProcess(database.url)
    try {
      /** SENDS sends one after another through `one`: per second, and the database's CPU ms per message. */
      const phase = async (one: (text: string) => Promise<unknown>, tag: string) => {
        for (let i = 0; i < 20; i++) await one(`${tag}-warm-${i}`)
        const started = performance.now()
        const { databaseSeconds } = await withDatabaseCpu(connection, dbName, async () => {
          for (let i = 0; i < SENDS; i++) await one(`${tag}-${i}`)
        })
        return { perSecond: SENDS / ((performance.now() - started) / 1000), dbMs: (databaseSeconds * 1000) / SENDS }
      }
      const alone = await phase((text) => client.request({ endpoint: parley.endpoint, call: send(text) }), 'alone')
      // The first message is what each subscription replays (sincePts 0) to tell it is live.
      await client.request({ endpoint: parley.endpoint, call: send('first') })
      await client.openSubscribers({
        wsUrl: parley.endpoint.replace(/^http/, 'ws'),
        calls: tokens.slice(1).map((token) => ({ token, query: EVENTS, variables: { id } })),
      })
      const watched = await phase(
        (text) => client.deliver({ endpoint: parley.endpoint, send: send(text), text }),
        'live',
      )
      await client.closeSubscribers()
      const ratio = watched.dbMs / alone.dbMs
      return [
        {
          scenario: `12 fan-out: one send delivered to ${SUBSCRIBERS} subscribers (graphql-ws), PostgreSQL CPU per message`,
          metric: 'database CPU ms per message',
          value: watched.dbMs.toFixed(2),
          baseline: `${alone.dbMs.toFixed(2)} (no subscriber)`,
          ratio,
          target: '≤ 1.5',
          met: ratio <= 1.5,
          note: `${SENDS} sequential sends each: ${watched.perSecond.toFixed(0)} messages/s delivered to all ${SUBSCRIBERS} subscribers, ${alone.perSecond.toFixed(0)}/s stored with none; the issue's ejabberd comparison is not measured here`,
        },
      ]
    } finally {
      await parley.close()
    }
  } finally {
    await connection.end()
    await database.drop()
  }
}
