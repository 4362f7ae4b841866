import pg from 'pg'
import { encodeGlobalId } from '../../src/ids.ts'
import { insertReadersConversation } from '../setup.ts'
import type { LoadClient } from '../client.ts'
import { pairedMedians } from '../measure.ts'
import { startParleyProcess } from '../server-process.ts'
import { createScenarioDatabase, tokenFor, type DatabaseHost, type Figure } from '../support.ts'

const CHANGES = 10_000
const RUNS = 3
const EVENT_FIELDS = `... on MessageEvent { kind pts message { id seq sentAt sender { handle } content { ... on TextContent { text } } } }`
const EVENTS = `subscription Resume($id: ID!, $since: SafeInt) { conversationEvents(conversationId: $id, sincePts: $since) { ${EVENT_FIELDS} } }`
const BATCHES = `subscription ResumeBatches($id: ID!, $since: SafeInt) { conversationEventBatches(conversationId: $id, sincePts: $since) { events { ${EVENT_FIELDS} } } }`

/**
 * Scenario 6: a subscriber resumes 10,000 changes behind (sincePts) over graphql-ws; rows per second
 * until the last replayed event arrives, against a raw SELECT of the same rows through pg. Measured
 * for both conversation streams: one change per payload, and a replayed page per payload.
 */
export async function replay(host: DatabaseHost, client: LoadClient): Promise<Figure[]> {
  const database = await createScenarioDatabase(host, 'replay')
  try {
    const conversationId = await insertReadersConversation(database.url, CHANGES)
    const token = await tokenFor('reader-0')
    const parley = await startParleyProcess(database.url, { poolSize: 10, env: { RESYNC_LIMIT: String(CHANGES * 2) } })
    const pool = new pg.Pool({ connectionString: database.url, max: 1 })
    // pool.end() resolves before its sockets close; the database's DROP … WITH (FORCE) may then end one,
    // which an idle client reports as an error that would otherwise crash the run.
    pool.on('error', () => {})
    try {
      const wsUrl = parley.endpoint.replace(/^http/, 'ws')
      const id = encodeGlobalId('Conversation', conversationId)
      const variables = { id, since: 0 }
      const perEvent = () => client.replay({ wsUrl, call: { token, query: EVENTS, variables }, events: CHANGES })
      const inBatches = () => client.replay({ wsUrl, call: { token, query: BATCHES, variables }, events: CHANGES, batchField: 'conversationEventBatches' })
      const viaSql = async () => {
        const started = performance.now()
        const { rowCount } = await pool.query(
          `SELECT m.*, u.handle FROM messages m JOIN users u ON u.id = m.sender_id WHERE m.conversation_id = $1 AND m.pts > 0 ORDER BY m.pts`,
          [conversationId],
        )
        if (rowCount !== CHANGES) throw new Error(`expected ${CHANGES} rows`)
        return CHANGES / ((performance.now() - started) / 1000)
      }
      const figure = async (stream: string, viaParley: () => Promise<number>): Promise<Figure> => {
        const [baseline, measured] = await pairedMedians(RUNS, viaSql, viaParley)
        return {
          scenario: `6 resume replay of ${CHANGES.toLocaleString('en')} missed changes (graphql-ws, ${stream})`,
          metric: 'rows/s',
          value: measured.toFixed(0),
          baseline: `${baseline.toFixed(0)} (raw SELECT of the same rows, pg)`,
          ratio: measured / baseline,
          target: '≥ 0.3',
          met: measured / baseline >= 0.3,
        }
      }
      return [
        await figure('conversationEvents: one change per payload', perEvent),
        await figure('conversationEventBatches: a page per payload', inBatches),
      ]
    } finally {
      await pool.end()
      await parley.close()
    }
  } finally {
    await database.drop()
  }
}
