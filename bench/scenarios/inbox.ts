import type pg from 'pg'
import { inboxStatement, type InboxQuery } from '../../src/store/inbox.ts'
import { findConversationsForUser } from '../../src/store/conversations.ts'
import { findLastVisibleMessages } from '../../src/store/messages.ts'
import { countUnread } from '../../src/store/reads.ts'
import { insertGroups, insertUsers, withClient } from '../setup.ts'
import type { GraphQLCall, LoadClient } from '../client.ts'
import { median, pairedMedians } from '../measure.ts'
import { startParleyProcess } from '../server-process.ts'
import { createScenarioDatabase, startParley, tokenFor, type DatabaseHost, type Figure } from '../support.ts'

const BIG = 10_000
const SMALL = 10
const OLD = 1_000
const OTHERS = 40_000
const PINNED = 3
const MESSAGES_EACH = 5
/**
 * Requests per round. Rounds of 40 measured the small viewer's page partly under the garbage and
 * warm-up the big viewer's round before it left (its p50 3.3–5.6 ms in 40-request rounds against
 * 2.5–2.6 in rounds of 200), which flattered the ratio (1.65 against 2.3 in the same code).
 */
const SAMPLES = 200
const RUNS = 5
/** Bump when the fixture changes, so a kept database (BENCH_REUSE_FIXTURES=1) is rebuilt. */
const VERSION = '1'

const FIELDS = `id title unreadCount lastMessage { seq sentAt sender { handle } content { ... on TextContent { text } } }`
const inboxPage = (first: number) =>
  `query Inbox { viewer { conversations(first: ${first}) { edges { node { ${FIELDS} } } } } }`
export const INBOX = inboxPage(50)
export const UNREAD_TOTAL = `query Total { viewer { unreadTotal } }`
/** Requests per round of the unreadTotal row (a sum over every conversation of the viewer: tens of ms for the big one). */
export const TOTAL_SAMPLES = 20

type Viewer = { handle: string; userId: number; conversations: number[] }

/**
 * Scenario 4: a conversations page of 50 with lastMessage and unreadCount for a viewer in 10,000
 * conversations against the same page for a viewer in 10, among 51,010 conversations, each viewer with
 * 3 pinned (and a page of 10 for both, which holds as many conversations on each side); and a viewer in 1,000 conversations all older than the other 50,010 (where a walk of the
 * newest conversations finds none of theirs). Also the SQL statement count of the page, counted by
 * Prisma's query log in an in-process server (a count, not a time).
 */
export async function inbox(host: DatabaseHost, client: LoadClient): Promise<Figure[]> {
  const { database, viewers } = await openInboxFixture(host)
  const [big, small, old] = viewers
  try {
    const walked = await withClient(database.url, async (pg) => {
      for (const v of [big!, small!, old!]) await checkPages(pg, v)
      await checkGenericPlan(pg, [small!, big!])
      await checkKeptPlans(pg, [small!, big!])
      return walkedRows(pg, old!)
    })
    const call = async (viewer: Viewer): Promise<GraphQLCall> => ({
      token: await tokenFor(viewer.handle),
      query: INBOX,
    })
    const [bigCall, smallCall, oldCall] = await Promise.all([big!, small!, old!].map(call))
    const statements = await statementsOf(database.url, client, bigCall!)
    const parley = await startParleyProcess(database.url)
    try {
      const timed = (count: number, c: GraphQLCall) => client.latencies({ endpoint: parley.endpoint, count, call: c })
      for (const c of [bigCall!, smallCall!, oldCall!]) await timed(20, c)
      // Rounds of SAMPLES requests, alternating, so drift hits both alike.
      const p50 = (c: GraphQLCall) => async () => median(await timed(SAMPLES, c))
      const [alone, bigMs] = await pairedMedians(RUNS, p50(smallCall!), p50(bigCall!))
      const [alone2, oldMs] = await pairedMedians(RUNS, p50(smallCall!), p50(oldCall!))
      // A page of 10 holds as many conversations for both viewers: what is left is the cost of being in 10,000.
      const ten = (c: GraphQLCall) => ({ ...c, query: inboxPage(SMALL) })
      const [alone10, big10] = await pairedMedians(RUNS, p50(ten(smallCall!)), p50(ten(bigCall!)))
      // Viewer.unreadTotal sums every conversation's count (decision 0263: each by exception, not by reading the unread messages).
      const total = (c: GraphQLCall) => async () => median(await timed(TOTAL_SAMPLES, { ...c, query: UNREAD_TOTAL }))
      const [smallTotal, bigTotal] = await pairedMedians(RUNS, total(smallCall!), total(bigCall!))
      return [
        {
          scenario: `4 inbox page of 50 (lastMessage, unreadCount, ${PINNED} pinned), viewer in ${BIG.toLocaleString('en')} conversations`,
          metric: 'p50 ms',
          value: bigMs.toFixed(2),
          baseline: `${alone.toFixed(2)} (the same page, viewer in ${SMALL})`,
          ratio: bigMs / alone,
          target: '≤ 1.5',
          met: bigMs / alone <= 1.5,
        },
        {
          scenario: `4 inbox page of ${SMALL} (as many conversations on both sides), viewer in ${BIG.toLocaleString('en')} conversations`,
          metric: 'p50 ms',
          value: big10.toFixed(2),
          baseline: `${alone10.toFixed(2)} (the same page, viewer in ${SMALL})`,
          ratio: big10 / alone10,
          target: 'reported',
          met: true,
        },
        {
          scenario: `4 Viewer.unreadTotal, viewer in ${BIG.toLocaleString('en')} conversations (${MESSAGES_EACH} unread in each)`,
          metric: 'p50 ms',
          value: bigTotal.toFixed(2),
          baseline: `${smallTotal.toFixed(2)} (viewer in ${SMALL})`,
          ratio: bigTotal / smallTotal,
          // A sum over all the viewer's conversations: O(conversations), no longer O(unread messages).
          target: 'reported',
          met: true,
        },
        {
          scenario: `4 inbox page of 50, viewer in ${OLD.toLocaleString('en')} conversations all older than the other ${(BIG + SMALL + OTHERS).toLocaleString('en')}`,
          metric: 'p50 ms',
          value: oldMs.toFixed(2),
          baseline: `${alone2.toFixed(2)} (the same page, viewer in ${SMALL})`,
          ratio: oldMs / alone2,
          // Bounded by its own 1,000 conversations, not by the 50,010 newer ones (the next row; decision 0150).
          target: 'reported',
          met: true,
        },
        {
          scenario: `4 inbox page of 50, viewer in ${OLD.toLocaleString('en')} old conversations: rows its statement reads from the activity index (EXPLAIN ANALYZE)`,
          metric: 'rows',
          value: walked.toLocaleString('en'),
          baseline: `${(BIG + SMALL + OTHERS).toLocaleString('en')} (the newer conversations a LIMIT plan walks)`,
          ratio: walked / (BIG + SMALL + OTHERS),
          target: `≤ ${WALK_BOUND} rows (the walk's bound, twice)`,
          met: walked <= WALK_BOUND,
        },
        {
          scenario: '4 inbox page of 50: SQL statements',
          metric: 'statements',
          value: String(statements),
          baseline: '6 (target ceiling)',
          ratio: statements / 6,
          target: '≤ 1 (≤ 6 statements)',
          met: statements <= 6,
        },
      ]
    } finally {
      await parley.close()
    }
  } finally {
    await database.drop()
  }
}

/** The scenario's database (kept with BENCH_REUSE_FIXTURES=1) and its viewers: big, small, old. */
export async function openInboxFixture(
  host: DatabaseHost,
): Promise<{ database: { url: string; drop(): Promise<void> }; viewers: Viewer[] }> {
  const database = await createScenarioDatabase(host, `inbox_v${VERSION}`, {
    keep: process.env.BENCH_REUSE_FIXTURES === '1',
  })
  return { database, viewers: await withClient(database.url, (pg) => fixture(pg)) }
}

/**
 * The viewers (big, small, old) and their conversations, built once per kept database: the big and
 * small viewers' conversations spread at random through the activity of 50,010, the old viewer's all
 * older than every other one.
 */
async function fixture(pg: pg.Client): Promise<Viewer[]> {
  const handles = ['inbox-big', 'inbox-small', 'inbox-old']
  const { rows: built } = await pg.query<{ id: string }>(
    `SELECT id FROM users WHERE handle = ANY($1) ORDER BY handle`,
    [handles],
  )
  if (built.length) return viewersOf(pg, handles)
  const [other] = await insertUsers(pg, 'inbox-other', 1)
  const users: number[] = []
  for (const h of handles) {
    const { rows } = await pg.query<{ id: string }>(
      `INSERT INTO users (handle, display_name) VALUES ($1, $1) RETURNING id`,
      [h],
    )
    users.push(Number(rows[0]!.id))
  }
  const [bigIds, smallIds] = [
    await insertGroups(pg, BIG, [users[0]!, other!]),
    await insertGroups(pg, SMALL, [users[1]!, other!]),
  ]
  await insertGroups(pg, OTHERS, [other!])
  const oldIds = await insertGroups(pg, OLD, [users[2]!, other!])
  await pg.query(
    `UPDATE conversations c SET last_activity_at = now() - make_interval(secs => r.place)
     FROM (SELECT id, row_number() OVER (ORDER BY md5(id::text)) AS place FROM conversations WHERE id <> ALL($1)) r WHERE c.id = r.id`,
    [oldIds],
  )
  await pg.query(
    `UPDATE conversations SET last_activity_at = now() - interval '1 day' - make_interval(secs => id) WHERE id = ANY($1)`,
    [oldIds],
  )
  const mine = [...bigIds, ...smallIds, ...oldIds]
  await pg.query(
    `INSERT INTO messages (conversation_id, seq, pts, sender_type, sender_id, kind, client_message_id, content, sent_at)
     SELECT c.id, s, s, 'USER', $2, 'TEXT', 'seed-' || s, jsonb_build_object('text', 'hi ' || s), c.last_activity_at - make_interval(secs => $3 - s)
     FROM conversations c CROSS JOIN generate_series(1, $3) s WHERE c.id = ANY($1)`,
    [mine, other, MESSAGES_EACH],
  )
  await pg.query(`UPDATE conversations SET last_seq = $2, last_pts = $2 WHERE id = ANY($1)`, [mine, MESSAGES_EACH])
  // Pins on conversations from the middle of each list, so the pinned part is not the newest anyway.
  for (const [i, ids] of [bigIds, smallIds].entries()) {
    await pg.query(
      `INSERT INTO conversation_settings (conversation_id, user_id, pinned_at) SELECT c, $2, now() - make_interval(secs => c) FROM unnest($1::bigint[]) c`,
      [ids.slice(ids.length / 2, ids.length / 2 + PINNED), users[i]],
    )
  }
  await pg.query('VACUUM ANALYZE')
  return viewersOf(pg, handles)
}

async function viewersOf(pg: pg.Client, handles: string[]): Promise<Viewer[]> {
  const { rows } = await pg.query<{ handle: string; id: string; conversations: string[] }>(
    `SELECT u.handle, u.id, array_agg(cm.conversation_id) AS conversations FROM users u JOIN conversation_members cm ON cm.user_id = u.id
     WHERE u.handle = ANY($1) GROUP BY u.handle, u.id`,
    [handles],
  )
  return handles
    .map((h) => rows.find((r) => r.handle === h)!)
    .map((r) => ({ handle: r.handle, userId: Number(r.id), conversations: r.conversations.map(Number) }))
}

/** The walk reads at most 500 index rows, and reads them once more to tell a short walk from the end of the list (decision 0150). */
const WALK_BOUND = 1_000
const FIRST_PAGE: InboxQuery = { type: null, archived: false, after: null, limit: 51 }

/**
 * Correctness guard: the viewer's whole list, page by page through the store's statement, equals one
 * plain sort of all their conversations (pinned first by pin time, then by activity).
 */
async function checkPages(pg: pg.Client, viewer: Viewer): Promise<void> {
  const { rows: expected } = await pg.query<{ id: string }>(
    `SELECT c.id FROM conversation_members cm JOIN conversations c ON c.id = cm.conversation_id
     LEFT JOIN conversation_settings cs ON (cs.conversation_id, cs.user_id) = (cm.conversation_id, cm.user_id)
     WHERE cm.user_id = $1 AND cm.left_at IS NULL AND NOT coalesce(cs.archived, false)
     ORDER BY cs.pinned_at IS NOT NULL DESC, coalesce(cs.pinned_at, c.last_activity_at) DESC, c.id DESC LIMIT 500`,
    [viewer.userId],
  )
  const listed: string[] = []
  let after: InboxQuery['after'] = null
  while (listed.length < expected.length) {
    const stmt = inboxStatement(viewer.userId, { ...FIRST_PAGE, after })
    const { rows } = await pg.query<{ id: string; pinned: boolean; sortAt: Date }>(stmt.text, stmt.values)
    const page = rows.slice(0, 50)
    if (!page.length) break
    listed.push(...page.map((r) => r.id))
    const last = page.at(-1)!
    after = { pinned: last.pinned, at: last.sortAt, id: Number(last.id) }
  }
  const want = expected.map((r) => r.id)
  if (listed.slice(0, want.length).join() !== want.join())
    throw new Error(`${viewer.handle}: the inbox pages differ from the plain sort`)
}

type Statement = { text: string; values: unknown[] }

/**
 * Runs each statement six times, in order, on one connection under one name; throws unless
 * PostgreSQL then keeps a generic plan for it. It plans a named statement's first five calls with
 * their values and keeps the generic plan only if it looks no dearer than those did.
 */
async function requireKeptPlan(pg: pg.Client, name: string, statements: Statement[], what: string): Promise<void> {
  for (const { text, values } of statements) for (let i = 0; i < 6; i++) await pg.query({ name, text, values })
  const { rows } = await pg.query<{ custom: string; generic: string }>(
    `SELECT custom_plans AS custom, generic_plans AS generic FROM pg_prepared_statements WHERE name = $1`,
    [name],
  )
  await pg.query(`DEALLOCATE "${name}"`)
  if (Number(rows[0]!.generic) === 0)
    throw new Error(`${what} planned on every call (${rows[0]!.custom} custom plans, no generic one)`)
}

/** The statement a store read sends, taken from a stand-in connection (queryPooled sends through $queryRaw without a pool). */
async function statementOf(read: (conn: never) => Promise<unknown>): Promise<Statement> {
  let statement: Statement | undefined
  const capture = {
    $queryRaw: async (sql: Statement) => {
      statement = sql
      throw new Error('captured')
    },
  }
  await read(capture as never).catch(() => {})
  return statement!
}

/**
 * Plan guard: one connection keeps the generic plan of the page's statement whoever calls it first;
 * a small viewer's plans looked cheaper, so the statement was planned on every call, for every viewer
 * on that connection (decision 0215).
 */
async function checkGenericPlan(pg: pg.Client, viewers: Viewer[]): Promise<void> {
  const statements = viewers.map((v) => inboxStatement(v.userId, FIRST_PAGE))
  await requireKeptPlan(pg, 'inbox-plan-guard', statements, 'the inbox statement is')
}

/**
 * Plan guard: the page's per-conversation reads, and the access check every request makes, keep a
 * generic plan on a connection whoever calls first (decision 0263): each is called for five of the
 * small viewer's conversations, then five of the big viewer's. With the reader and the ids as values
 * PostgreSQL planned them on every call (the unread counts of five conversations: 1.1 ms of planning
 * against 0.16 ms of execution; the small viewer's last messages 0.45 against 0.33).
 */
async function checkKeptPlans(pg: pg.Client, viewers: Viewer[]): Promise<void> {
  const reads: Record<string, (conn: never, v: Viewer) => Promise<unknown>> = {
    'unread counts': (conn, v) => countUnread(conn, { userId: v.userId }, v.conversations.slice(0, 5)),
    'last messages': (conn, v) => findLastVisibleMessages(conn, { userId: v.userId }, v.conversations.slice(0, 5)),
    'access checks': (conn, v) => findConversationsForUser(conn, v.conversations.slice(0, 5), v.userId),
  }
  for (const [what, read] of Object.entries(reads)) {
    const statements = await Promise.all(viewers.map((v) => statementOf((conn) => read(conn, v))))
    // A name of its own for each statement: pg remembers which text a name was prepared with.
    await requireKeptPlan(pg, `kept-plan-guard ${what}`, statements, `the ${what} are`)
  }
}

/** Plan guard: the rows the old viewer's first page reads from conversations' activity index. */
async function walkedRows(pg: pg.Client, viewer: Viewer): Promise<number> {
  const stmt = inboxStatement(viewer.userId, FIRST_PAGE)
  const { rows } = await pg.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
    `EXPLAIN (ANALYZE, FORMAT JSON) ${stmt.text}`,
    stmt.values,
  )
  const walked = (node: PlanNode): number =>
    (node['Index Name'] === 'conversations_last_activity_at_id_idx' ? node['Actual Rows'] * node['Actual Loops'] : 0) +
    (node.Plans ?? []).reduce((sum, p) => sum + walked(p), 0)
  return walked(rows[0]!['QUERY PLAN'][0].Plan)
}

type PlanNode = { 'Index Name'?: string; 'Actual Rows': number; 'Actual Loops': number; Plans?: PlanNode[] }

/** The SQL statements one warm inbox page takes (and a check that it is a full page). */
async function statementsOf(databaseUrl: string, client: LoadClient, call: GraphQLCall): Promise<number> {
  const counted = await startParley(databaseUrl, 4, { countStatements: true })
  try {
    await client.request({ endpoint: counted.endpoint, call })
    const before = counted.statements.count
    const page = (await client.request({ endpoint: counted.endpoint, call })) as {
      viewer: { conversations: { edges: unknown[] } }
    }
    if (page.viewer.conversations.edges.length !== 50) throw new Error('expected a page of 50')
    return counted.statements.count - before
  } finally {
    await counted.close()
  }
}
