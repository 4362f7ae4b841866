import { encodeGlobalId } from '../../src/domain/core/ids.ts'
import { serverCpuPerCall } from '../cpu.ts'
import { insertReadersConversation } from '../setup.ts'
import type { LoadClient } from '../client.ts'
import { pairedMedians } from '../measure.ts'
import { buildOnce, startParleyProcess, type ParleyProcess, type ServerBuild } from '../server-process.ts'
import { createScenarioDatabase, tokenFor, type DatabaseHost, type Figure } from '../support.ts'

const MESSAGES = 2_000
const REQUESTS = 2_000
const RUNS = 5

const HISTORY = `query History($id: ID!) {
  conversation(id: $id) { messages(last: 50) { edges { cursor node { seq sentAt sender { handle } content { ... on TextContent { text } } } } } } }`

/**
 * Scenario 8: the compiled build `npm start` runs against the source through tsx (`npm run dev`):
 * server CPU per history page at steady state, both servers up on the same database and measured in
 * alternating rounds, and the time from launch to listening (the build itself not included: the bench
 * builds once before it).
 */
export async function build(host: DatabaseHost, client: LoadClient): Promise<Figure[]> {
  buildOnce()
  const database = await createScenarioDatabase(host, 'build')
  const servers: ParleyProcess[] = []
  try {
    const conversationId = await insertReadersConversation(database.url, MESSAGES)
    const token = await tokenFor('reader-0')
    const call = { token, query: HISTORY, variables: { id: encodeGlobalId('Conversation', conversationId) } }
    const start = async (build: ServerBuild) => {
      const started = performance.now()
      const server = await startParleyProcess(database.url, { build })
      servers.push(server)
      return { server, startupMs: performance.now() - started }
    }
    const tsx = await start('tsx')
    const compiled = await start('compiled')
    const calls = Array.from({ length: REQUESTS }, () => call)
    const [tsxCpu, compiledCpu] = await pairedMedians(
      RUNS,
      serverCpuPerCall(client, tsx.server, calls),
      serverCpuPerCall(client, compiled.server, calls),
    )
    return [
      {
        scenario: '8 server CPU per history page of 50, compiled build (npm start)',
        metric: 'CPU µs/page',
        value: compiledCpu.toFixed(0),
        baseline: `${tsxCpu.toFixed(0)} (tsx: npm run dev)`,
        ratio: compiledCpu / tsxCpu,
        target: 'reported',
        met: true,
      },
      {
        scenario: '8 launch to listening, compiled build (npm start, after its build)',
        metric: 'ms',
        value: compiled.startupMs.toFixed(0),
        baseline: `${tsx.startupMs.toFixed(0)} (tsx: npm run dev)`,
        ratio: compiled.startupMs / tsx.startupMs,
        target: 'reported',
        met: true,
        note: `RSS after the run: compiled ${(compiled.server.rssBytes() / 2 ** 20).toFixed(0)} MiB, tsx ${(tsx.server.rssBytes() / 2 ** 20).toFixed(0)} MiB`,
      },
    ]
  } finally {
    await Promise.all(servers.map((s) => s.close()))
    await database.drop()
  }
}
