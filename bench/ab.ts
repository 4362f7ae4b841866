// npm run bench:ab -- <git ref> [history|inbox|replay|pause …]: the build of <ref> against this checkout's, side by side.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, symlinkSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import os from 'node:os'
import path from 'node:path'
import { encodeGlobalId } from '../src/domain/core/ids.ts'
import { startClient, type GraphQLCall, type LoadClient } from './client.ts'
import { alternatingSamples, median } from './measure.ts'
import { README_HISTORY } from './scenarios/history-depth.ts'
import { INBOX, openInboxFixture, TOTAL_SAMPLES, UNREAD_TOTAL } from './scenarios/inbox.ts'
import { CHANGES, EVENTS, prepareAccountResume } from './scenarios/replay.ts'
import { MESSAGES_PER_RUN, sendFixture } from './scenarios/send-throughput.ts'
import { startParleyProcess, type ParleyProcess } from './server-process.ts'
import { insertReadersConversation } from './setup.ts'
import { createScenarioDatabase, openDatabaseHost, openFixture, tokenFor, type DatabaseHost } from './support.ts'

/**
 * Side by side (decisions' per-change figures): the compiled build of a git ref, built in a
 * worktree, and this checkout's, each its own server process as `npm start` runs it, on the same
 * database (migrated by both: a ref older than a migration runs on the newer tables), in rounds
 * whose order alternates (base then this, this then base, …). Each row: both medians, their ratio,
 * the median and range of the ratio within each pair of runs, and the server CPU per operation. `npm run bench:ab -- HEAD` runs this checkout against itself: what the machine
 * makes of two identical servers, the floor under any difference read here. Rounds: AB_ROUNDS (12).
 */

const ROOT = path.resolve(import.meta.dirname, '..')
const ROUNDS = Number(process.env.AB_ROUNDS ?? 12)
const HISTORY_MESSAGES = 20_000
const HISTORY_PAGES = 3_000
const INBOX_SAMPLES = 200
/** How long both servers sit idle before each run of the pause scenario: longer than pg's 10 s idle timeout (decision 0266). */
const PAUSE_MS = 12_000

/** One figure measured on each side: `run` returns it for one round of `ops` operations. */
type Measure = { label: string; unit: string; ops: number; run(server: ParleyProcess): Promise<number> }
type Sides = [base: ParleyProcess, current: ParleyProcess]
type Scenario = (
  host: DatabaseHost,
  client: LoadClient,
  start: (url: string, env?: Record<string, string>) => Promise<Sides>,
) => Promise<{ sides: Sides; measures: Measure[]; close(): Promise<void> }>

const git = (...args: string[]) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim()

/** The ref's tree as a worktree with this checkout's node_modules, its Prisma client generated and its build compiled. */
function buildBaseline(ref: string): { root: string; commit: string; remove(): void } {
  const commit = git('rev-parse', '--verify', `${ref}^{commit}`)
  const root = mkdtempSync(path.join(os.tmpdir(), 'parley-ab-'))
  git('worktree', 'add', '--detach', root, commit)
  const remove = () => void git('worktree', 'remove', '--force', root)
  try {
    symlinkSync(path.join(ROOT, 'node_modules'), path.join(root, 'node_modules'))
    execFileSync('npx', ['prisma', 'generate'], { cwd: root, stdio: 'ignore' })
    execFileSync('npm', ['run', 'build'], { cwd: root, stdio: 'ignore' })
  } catch (error) {
    remove()
    throw error
  }
  return { root, commit, remove }
}

const sequentialP50 =
  (client: LoadClient, call: GraphQLCall, count = INBOX_SAMPLES): Measure['run'] =>
  async (server) =>
    median(await client.latencies({ endpoint: server.endpoint, count, call }))

const closing = (sides: Sides, database: { drop(): Promise<void> }) => async () => {
  await Promise.all(sides.map((s) => s.close()))
  await database.drop()
}

const SCENARIOS: Record<string, Scenario> = {
  /** The README's history page at concurrency 8 (the bench's history rows, on a smaller fixture: the page is flat with depth). */
  async history(host, client, start) {
    const database = await openFixture(host, `history_${HISTORY_MESSAGES}`, (url) =>
      insertReadersConversation(url, HISTORY_MESSAGES),
    )
    const sides = await start(database.url)
    const call = {
      token: await tokenFor('reader-0'),
      query: README_HISTORY,
      variables: { id: encodeGlobalId('Conversation', database.fixture), before: null },
    }
    const calls = Array.from({ length: HISTORY_PAGES }, () => call)
    const measures = [
      {
        label: 'history page of 50, concurrency 8',
        unit: 'pages/s',
        ops: HISTORY_PAGES,
        run: (s: ParleyProcess) => client.throughput({ endpoint: s.endpoint, concurrency: 8, calls }),
      },
    ]
    return { sides, measures, close: closing(sides, database) }
  },
  /**
   * The inbox page of 50 for the viewer in 10,000 conversations and for the viewer in 10, and the
   * first one's Viewer.unreadTotal (p50 of sequential requests).
   */
  async inbox(host, client, start) {
    const { database, viewers } = await openInboxFixture(host)
    const sides = await start(database.url)
    const measures = await Promise.all(
      viewers.slice(0, 2).map(async (v) => ({
        label: `inbox page of 50, ${v.handle}`,
        unit: 'p50 ms',
        ops: INBOX_SAMPLES,
        run: sequentialP50(client, { token: await tokenFor(v.handle), query: INBOX }),
      })),
    )
    const big = { token: await tokenFor(viewers[0]!.handle), query: UNREAD_TOTAL }
    measures.push({
      label: `unreadTotal, ${viewers[0]!.handle}`,
      unit: 'p50 ms',
      ops: TOTAL_SAMPLES,
      run: sequentialP50(client, big, TOTAL_SAMPLES),
    })
    return { sides, measures, close: closing(sides, database) }
  },
  /** Scenario 1's sends (32 senders over 1,000 groups, MESSAGES_PER_RUN a run), each run after PAUSE_MS idle: its slowest send (decision 0266). */
  async pause(host, client, start) {
    const fixture = await sendFixture(host, client, 'ab_pause', 1000)
    const sides = await start(fixture.databaseUrl)
    const afterPause = async (server: ParleyProcess) => {
      await sleep(PAUSE_MS)
      return Math.max(...(await fixture.viaParley(undefined, undefined, server)).ms)
    }
    const measures = [
      {
        label: `slowest of a run of sends after ${PAUSE_MS / 1000} s idle`,
        unit: 'ms',
        ops: MESSAGES_PER_RUN,
        run: afterPause,
      },
    ]
    return { sides, measures, close: closing(sides, { drop: fixture.close }) }
  },
  /** Resumes over graphql-ws: 10,000 changes of one conversation, and the account stream over 2,000 changed conversations. */
  async replay(host, client, start) {
    const database = await createScenarioDatabase(host, 'ab_replay')
    const conversationId = await insertReadersConversation(database.url, CHANGES)
    const sides = await start(database.url, { RESYNC_LIMIT: String(CHANGES * 2) })
    const account = await prepareAccountResume(database.url, sides[0].endpoint, client)
    const readerToken = await tokenFor('reader-0')
    const resume = (call: GraphQLCall, events: number) => (s: ParleyProcess) =>
      client.replay({ wsUrl: s.endpoint.replace(/^http/, 'ws'), call, events })
    const measures = [
      {
        label: 'conversationEvents resume, one change a payload',
        unit: 'rows/s',
        ops: CHANGES,
        run: resume(
          {
            token: readerToken,
            query: EVENTS,
            variables: { id: encodeGlobalId('Conversation', conversationId), since: 0 },
          },
          CHANGES,
        ),
      },
      {
        label: 'viewerUpdates resume',
        unit: 'rows/s',
        ops: account.conversations,
        run: resume(
          { token: account.token, query: account.query, variables: { since: account.since } },
          account.conversations,
        ),
      },
    ]
    return { sides, measures, close: closing(sides, database) }
  },
}

/** Three warm-up runs on each side, then ROUNDS rounds of both in alternating order; a table row per measure. */
async function compare(measure: Measure, sides: Sides): Promise<string> {
  const cpu: [number[], number[]] = [[], []]
  const timed = (i: 0 | 1) => async () => {
    const before = sides[i].cpuSeconds()
    const value = await measure.run(sides[i])
    cpu[i].push(((sides[i].cpuSeconds() - before) * 1e6) / measure.ops)
    return value
  }
  const [base, current] = await alternatingSamples(ROUNDS, [timed(0), timed(1)], {
    warmups: 3,
    reverseEveryOther: true,
  })
  const pairRatios = current!.map((v, i) => v / base![i]!)
  // The warm-up runs' CPU is not a round's.
  const rounds = (xs: number[]) => median(xs.slice(-ROUNDS))
  const fixed = (x: number) => (x >= 100 ? x.toFixed(0) : x.toFixed(2))
  return `| ${measure.label} | ${measure.unit} | ${fixed(median(base!))} | ${fixed(median(current!))} | ${(median(current!) / median(base!)).toFixed(3)} | ${median(pairRatios).toFixed(3)} (${Math.min(...pairRatios).toFixed(2)}–${Math.max(...pairRatios).toFixed(2)}) | ${rounds(cpu[0]).toFixed(0)} → ${rounds(cpu[1]).toFixed(0)} |`
}

const [ref, ...chosen] = process.argv.slice(2).filter((a) => !a.startsWith('-'))
if (!ref) throw new Error(`usage: npm run bench:ab -- <git ref> [${Object.keys(SCENARIOS).join('|')} …]`)
for (const name of chosen)
  if (!SCENARIOS[name]) throw new Error(`unknown scenario ${name}; known: ${Object.keys(SCENARIOS).join(', ')}`)
const baseline = buildBaseline(ref)
const host = await openDatabaseHost()
const client = startClient()
const rows: string[] = []
try {
  const start = async (url: string, env: Record<string, string> = {}): Promise<Sides> => [
    await startParleyProcess(url, { env, root: baseline.root }),
    await startParleyProcess(url, { env }),
  ]
  for (const name of chosen.length ? chosen : Object.keys(SCENARIOS)) {
    console.error(`[ab] ${name}…`)
    const { sides, measures, close } = await SCENARIOS[name]!(host, client, start)
    try {
      for (const measure of measures) rows.push(await compare(measure, sides))
    } finally {
      await close()
    }
  }
} finally {
  client.close()
  await host.stop()
  baseline.remove()
}
console.log(`${ref} (${baseline.commit.slice(0, 10)}) against this checkout, ${ROUNDS} rounds, order alternating\n`)
console.log(
  '| measure | unit | base | this | this / base | per-pair ratio (range) | server CPU µs/op, base → this |\n|---|---|---|---|---|---|---|',
)
console.log(rows.join('\n'))
