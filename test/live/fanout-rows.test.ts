import pg from 'pg'
import { describe, expect, it } from 'vitest'
import { poolOf } from '../../src/db/client.ts'
import { newUsers, sqlLog, testApp, type TestUser } from '../support/harness.ts'
import { AddReaction } from '../support/interactions.ts'
import { createGroup, SendMessage } from '../support/operations.ts'
import { liveServer, subscribeWs, waitForSubscriptions, type Received } from '../support/server.ts'

/**
 * Issue 49, item 0: what one event costs the database must not grow with the number of local
 * subscribers beyond their own membership rows. N members of one group hold an `inboxEvents`
 * stream over graphql-ws selecting what a chat client shows (sender, content, quote, mentions,
 * reactions, the viewer's own state and membership); the same sends, quotes and reactions are
 * counted with 1 and with 32 subscribers.
 */

const instance = liveServer()

const FanoutInbox = `subscription FanoutInbox {
  inboxEvents {
    __typename
    ... on MessageEvent {
      kind pts alert cursor
      message {
        id seq pts kind senderType status sentAt editedAt clientMessageId mentionsAll mentionsViewer
        sender { id handle displayName kind }
        mentions { id handle }
        content { __typename ... on TextContent { text } }
        quoted { id seq sender { id handle } content { ... on TextContent { text } } }
        reactions { emoji count viewerReacted }
        viewerState { favorite remindAt }
        conversation { id title type viewerMember { role } }
      }
    }
  }
}`

type Event = {
  inboxEvents: {
    __typename: string
    kind?: string
    pts?: number
    message?: { content: { text?: string } | null; reactions: { emoji: string; count: number }[]; sender: unknown }
  }
}

/** Rows each statement text returned to the server, counted where pg hands them over (real statements, only tallied). */
const rowsBySql = new Map<string, number>()
const tally = (sql: unknown, result: unknown) => {
  const results = Array.isArray(result) ? result : [result]
  const rows = results.reduce((n: number, r) => n + ((r as { rows?: unknown[] } | undefined)?.rows?.length ?? 0), 0)
  const text = typeof sql === 'string' ? sql : String((sql as { text?: string } | undefined)?.text ?? '')
  rowsBySql.set(text, (rowsBySql.get(text) ?? 0) + rows)
}
const query = pg.Client.prototype.query as (...args: unknown[]) => unknown
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  const callbackAt = args.findIndex((a) => typeof a === 'function')
  const config = args[0] as { callback?: (e: unknown, r: unknown) => void } | undefined
  if (callbackAt >= 0) {
    const callback = args[callbackAt] as (e: unknown, r: unknown) => void
    args[callbackAt] = (error: unknown, result: unknown) => (error || tally(args[0], result), callback(error, result))
  } else if (config && typeof config.callback === 'function') {
    const callback = config.callback
    config.callback = (error, result) => (error || tally(config, result), callback(error, result))
  }
  const returned = query.apply(this, args)
  if (returned instanceof Promise) return returned.then((result: unknown) => (tally(args[0], result), result))
  return returned
} as typeof pg.Client.prototype.query

/** With FANOUT_REPORT set, the test also prints what PostgreSQL itself counted (pg_stat_database), which it does not assert. */
const REPORT = Boolean(process.env.FANOUT_REPORT)

/**
 * The database's own tallies: rows returned by its scans and transactions. A backend hands its
 * counters over when it goes idle, at most once a second, so this waits a second and then has every
 * pooled connection run a statement (a wait, not a timing assertion; only when reporting).
 */
async function serverTallies(): Promise<{ returned: number; transactions: number }> {
  if (!REPORT) return { returned: 0, transactions: 0 }
  await new Promise((resolve) => setTimeout(resolve, 1100))
  const pool = poolOf(testApp().db)!
  const clients = await Promise.all(Array.from({ length: pool.totalCount }, () => pool.connect()))
  for (const client of clients) await client.query('SELECT 1')
  for (const client of clients) client.release()
  const { rows } = await pool.query<{ returned: string; transactions: string }>(
    `SELECT tup_returned AS returned, xact_commit + xact_rollback AS transactions FROM pg_stat_database WHERE datname = current_database()`,
  )
  return { returned: Number(rows[0]!.returned), transactions: Number(rows[0]!.transactions) }
}

type Cost = {
  statements: number
  rows: number
  byStatement: Map<string, { statements: number; rows: number }>
  server: { returned: number; transactions: number }
}

/** Statements and rows (besides transaction control) `work` causes, and which statements they were. */
async function measure(work: () => Promise<void>): Promise<Cost> {
  const before = await serverTallies()
  const from = sqlLog.length
  rowsBySql.clear()
  await work()
  const after = await serverTallies()
  const server = { returned: after.returned - before.returned, transactions: after.transactions - before.transactions }
  const byStatement = new Map<string, { statements: number; rows: number }>()
  for (const sql of sqlLog.slice(from)) {
    if (/^(BEGIN|COMMIT|ROLLBACK)/i.test(sql.trim())) continue
    const entry = byStatement.get(sql) ?? { statements: 0, rows: 0 }
    entry.statements++
    byStatement.set(sql, entry)
  }
  for (const [sql, rows] of rowsBySql) {
    const entry = byStatement.get(sql)
    if (entry) entry.rows += rows
  }
  const total = (key: 'statements' | 'rows') => [...byStatement.values()].reduce((n, e) => n + e[key], 0)
  return { statements: total('statements'), rows: total('rows'), byStatement, server }
}

const ROUNDS = 4

/**
 * ROUNDS rounds of three events into the group (a send, a send quoting it and mentioning the first
 * listener, a reaction to the first), each awaited until every subscriber has it.
 */
async function rounds(sender: TestUser, mentioned: TestUser, groupId: string, streams: Received<Event>[], tag: string) {
  for (let round = 0; round < ROUNDS; round++) {
    const arrived = (text: string) =>
      Promise.all(
        streams.map((s) => s.waitUntil((es) => es.some((e) => e.inboxEvents.message?.content?.text === text))),
      )
    const send = async (text: string, extra: Record<string, unknown> = {}) => {
      const input = { conversationId: groupId, clientMessageId: text, content: { text: { text } }, ...extra }
      const sent = (await sender.run(SendMessage, { input })).sendMessage
      await arrived(text)
      return sent.message.id
    }
    const first = await send(`${tag}-${round}`)
    await send(`${tag}-${round} reply @${mentioned.handle}`, {
      quotedMessageId: first,
      mentionUserIds: [mentioned.id],
    })
    await sender.run(AddReaction, { messageId: first, emoji: '👍' })
    await Promise.all(
      streams.map((s) =>
        s.waitUntil((es) =>
          es.some(
            (e) =>
              e.inboxEvents.kind === 'REACTIONS_CHANGED' &&
              e.inboxEvents.message?.content?.text === `${tag}-${round}` &&
              e.inboxEvents.message.reactions.some((g) => g.emoji === '👍'),
          ),
        ),
      ),
    )
  }
}

/**
 * In a fresh group of the sender and all `members` (so every count starts from the same history),
 * opens the first `subscribed` members' inbox streams, lets one round warm them, then counts ROUNDS rounds.
 */
async function costWith(sender: TestUser, members: TestUser[], subscribed: number, tag: string): Promise<Cost> {
  const { app } = instance.server
  const groupId = (await createGroup(sender, members)).id
  const listeners = members.slice(0, subscribed)
  const streams = listeners.map((u) => subscribeWs<Event, never>(instance.connect(u.token), FanoutInbox))
  await Promise.all(listeners.map((u) => waitForSubscriptions(app, u, 1)))
  await rounds(sender, listeners[0]!, groupId, streams, `${tag}-warm`)
  const cost = await measure(() => rounds(sender, listeners[0]!, groupId, streams, tag))
  for (const stream of streams) {
    expect(stream.errors).toEqual([])
    stream.dispose()
  }
  await Promise.all(listeners.map((u) => waitForSubscriptions(app, u, 0)))
  return cost
}

const EVENTS = ROUNDS * 3

describe('fan-out to N subscribers', () => {
  it('reads what an event needs once: rows per event with 32 subscribers stay within 1.5× those with 1, plus their membership rows', async () => {
    testApp()
    const [sender, ...listeners] = await newUsers(33, 'fanout')
    const one = await costWith(sender!, listeners, 1, 'one')
    const eight = await costWith(sender!, listeners, 8, 'eight')
    const many = await costWith(sender!, listeners, 32, 'many')
    const perEvent = (c: Cost) => ({
      statements: +(c.statements / EVENTS).toFixed(1),
      rows: +(c.rows / EVENTS).toFixed(1),
      serverRows: +(c.server.returned / EVENTS).toFixed(1),
      transactions: +(c.server.transactions / EVENTS).toFixed(1),
    })
    if (REPORT) {
      for (const [n, cost] of [
        [1, one],
        [8, eight],
        [32, many],
      ] as const) {
        console.info(`N=${n}`, perEvent(cost))
        for (const [sql, e] of cost.byStatement)
          console.info(`  ${e.statements} stmts ${e.rows} rows  ${sql.replace(/\s+/g, ' ').slice(0, 160)}`)
      }
    }
    // Each of the 31 extra subscribers may cost its own membership row per event, nothing else.
    const membershipRows = 31
    expect(perEvent(many).rows).toBeLessThanOrEqual(perEvent(one).rows * 1.5 + membershipRows)
    // And the statements of an event do not grow with its audience.
    expect(perEvent(many).statements).toBeLessThanOrEqual(perEvent(one).statements * 1.5)
  })
})
