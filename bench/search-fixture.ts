import type pg from 'pg'
import { migrateDeploy } from '../src/db/migrate.ts'
import { messageDocument } from '../src/domain/search/documents.ts'
import { insertGroups, insertUsers, withClient } from './setup.ts'
import { createScenarioDatabase, type DatabaseHost } from './support.ts'

export const CONVERSATIONS = 1000
export const VIEWER_CONVERSATIONS = 100
export const PER_CONVERSATION = Number(process.env.BENCH_SEARCH_PER_CONVERSATION ?? 1000)
export const MESSAGES = CONVERSATIONS * PER_CONVERSATION
/** Phrases planted at known rates, so each query's number of matches is known (docs/search.md). */
export const PLANTED = { leave: '今天请假审批过了吗', budget: 'budget review', budgetAlone: 'budget' }
const RATES = { leave: 0.004, budget: 0.004, budgetAlone: 0.003 }
/** Distinct generated texts; each message takes one by a hash of its key. */
const TEXTS = 100_000

/**
 * 1,000 groups of 1,000 messages each (by default), sent by 10 authors, interleaved in time; the
 * viewer `searcher-0` is a member of every tenth group. Texts: 45 % Chinese (8–30 characters drawn
 * log-uniformly from 3,000 Han characters), 45 % English-like (4–15 words drawn log-uniformly from
 * 8,000 made-up words), 10 % both; the phrases of PLANTED are added at RATES. Rows are written by
 * INSERT … SELECT generate_series. Search documents: built in TypeScript by the send path's own
 * messageDocument for each of the 100,000 distinct texts, then copied to the messages that use
 * them in SQL, with the GIN indexes built after.
 */
async function buildSearchFixture(url: string): Promise<SearchFixture> {
  return withClient(url, async (client) => {
    const [viewerId] = await insertUsers(client, 'searcher', 1)
    const authorIds = await insertUsers(client, 'author', 10)
    const conversationIds = await insertGroups(client, CONVERSATIONS, authorIds)
    const viewerConversations = conversationIds.filter((_, i) => i % (CONVERSATIONS / VIEWER_CONVERSATIONS) === 0)
    await client.query(
      `INSERT INTO conversation_members (conversation_id, user_id, role) SELECT unnest($1::bigint[]), $2, 'MEMBER'`,
      [viewerConversations, viewerId],
    )
    await step('texts and their documents', () => writeTexts(client))
    await client.query(`DROP INDEX message_search_document_idx; DROP INDEX message_search_words_idx`)
    // Messages in sending order (interleaved across conversations, as a real table fills), each with
    // a text chosen by a hash of its key, and its document beside it in the same statement.
    await step('messages and their documents', () =>
      client.query(
        `WITH keyed AS (
          SELECT c.id, c.i, s, t.text, t.document, timestamptz '2026-01-01' + make_interval(secs => (s * $3::int + c.i) / 10.0) AS sent_at
          FROM generate_series(1, $4::int) s CROSS JOIN unnest($1::bigint[]) WITH ORDINALITY AS c(id, i)
          JOIN texts t ON t.n = 1 + (hashint8(s * 7919 + c.id) & 2147483647) % ${TEXTS}
          ORDER BY s, c.i),
        written AS (
          INSERT INTO messages (conversation_id, seq, pts, sender_type, sender_id, kind, client_message_id, content, sent_at)
          SELECT id, s, s, 'USER', ($2::bigint[])[1 + (s + i) % 10], 'TEXT', 'seed-' || s, jsonb_build_object('text', text), sent_at FROM keyed)
        INSERT INTO message_search (conversation_id, seq, sent_at, document) SELECT id, s, sent_at, document FROM keyed`,
        [conversationIds, authorIds, CONVERSATIONS, PER_CONVERSATION],
      ),
    )
    await client.query(`UPDATE conversations SET last_seq = $1, last_pts = $1 WHERE id = ANY($2::bigint[])`, [
      PER_CONVERSATION,
      conversationIds,
    ])
    await client.query(`SET maintenance_work_mem = '512MB'`)
    await step('GIN index', () =>
      client.query(`CREATE INDEX message_search_document_idx ON message_search USING GIN (document)`),
    )
    await step('per-conversation words GIN index', () =>
      client.query(
        `CREATE INDEX message_search_words_idx ON message_search USING GIN (message_search_words(conversation_id, document)) WITH (fastupdate = off)`,
      ),
    )
    await step('VACUUM ANALYZE', () =>
      client.query('VACUUM ANALYZE messages, message_search, conversation_members, users'),
    )
    return { viewerId: viewerId!, conversationId: viewerConversations[0]! }
  })
}

export type SearchFixture = { viewerId: number; /** One of the viewer's conversations. */ conversationId: number }

/** Bumped when the layout changes (2: the per-conversation words index; 3: without its pending list), so an older fixture is not reused. */
const VERSION = `3-${CONVERSATIONS}-${PER_CONVERSATION}`

/**
 * The fixture's database. With BENCH_REUSE_FIXTURES=1 (and BENCH_DATABASE_URL) it is kept after the
 * run and reused by the next one; a build that did not finish is thrown away and redone.
 */
export async function openSearchFixture(
  host: DatabaseHost,
): Promise<SearchFixture & { url: string; drop(): Promise<void> }> {
  const database = await createScenarioDatabase(host, `search_${VERSION.replaceAll('-', '_')}`, {
    keep: process.env.BENCH_REUSE_FIXTURES === '1',
  })
  const built = await withClient(database.url, async (client) => {
    const { rows } = await client
      .query(`SELECT viewer_id, conversation_id FROM bench_fixture WHERE version = $1`, [VERSION])
      .catch(() => ({ rows: [] }))
    if (rows[0]) return { viewerId: Number(rows[0].viewer_id), conversationId: Number(rows[0].conversation_id) }
    await client.query('DROP SCHEMA public CASCADE; CREATE SCHEMA public')
    return null
  })
  if (built) return { ...built, ...database }
  migrateDeploy(database.url)
  const fixture = await buildSearchFixture(database.url)
  await withClient(database.url, (client) =>
    client.query(
      `CREATE TABLE bench_fixture AS SELECT $1::text AS version, $2::bigint AS viewer_id, $3::bigint AS conversation_id`,
      [VERSION, fixture.viewerId, fixture.conversationId],
    ),
  )
  return { ...fixture, ...database }
}

async function step<T>(name: string, work: () => Promise<T>): Promise<T> {
  const started = performance.now()
  const result = await work()
  console.error(`[bench]   search fixture: ${name} in ${((performance.now() - started) / 1000).toFixed(1)} s`)
  return result
}

/** A seeded PRNG (mulberry32), so every run builds the same texts. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const SYLLABLES = ['ka', 'lo', 'mi', 'ne', 'ta', 'ri', 'so', 've', 'da', 'pi', 'mo', 're', 'sa', 'ti', 'no', 'le', 'ga']
const made = (k: number) =>
  SYLLABLES[k % 17]! + SYLLABLES[Math.floor(k / 17) % 17]! + (k >= 289 ? SYLLABLES[Math.floor(k / 289) % 17]! : '')

/** The generated texts (see buildSearchFixture) with their documents, built by the send path's own messageDocument. */
async function writeTexts(client: pg.Client): Promise<void> {
  const next = random(17)
  // Log-uniform draws (exp of a uniform): a few characters and words are common, most are rare.
  const draw = (n: number) => Math.floor(Math.exp(next() * Math.log(n))) - 1
  const texts = Array.from({ length: TEXTS }, (_, n) => {
    const r = next()
    const han = Array.from({ length: 8 + ((n * 7) % 23) }, () => String.fromCodePoint(0x4e00 + draw(3000))).join('')
    const latin = Array.from({ length: 4 + ((n * 5) % 12) }, () => made(draw(8000))).join(' ')
    const planted = [
      next() < RATES.leave && PLANTED.leave,
      next() < RATES.budget ? PLANTED.budget : next() < RATES.budgetAlone && PLANTED.budgetAlone,
    ]
    return [r < 0.55 ? han : '', r >= 0.45 ? latin : '', ...planted].filter(Boolean).join(' ')
  })
  await client.query(`CREATE TEMP TABLE texts (n int PRIMARY KEY, text text, document tsvector)`)
  for (let i = 0; i < TEXTS; i += 5000) {
    const batch = texts.slice(i, i + 5000)
    await client.query(`INSERT INTO texts SELECT * FROM unnest($1::int[], $2::text[], $3::tsvector[])`, [
      batch.map((_, j) => i + j + 1),
      batch,
      batch.map((text) => messageDocument('TEXT', { text })),
    ])
  }
}
