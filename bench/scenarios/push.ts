import { withPgClient } from '../../src/db/pg.ts'
import { encodeGlobalId } from '../../src/domain/core/ids.ts'
import { startPushWorker } from '../../src/domain/push/index.ts'
import { createScenarioDatabase, startParley, tokenFor, type DatabaseHost, type Figure } from '../support.ts'
import { loneSenderFigure, startLoopbackReceiver } from './outbox.ts'

const MEMBERS = Number(process.env.BENCH_PUSH_MEMBERS ?? 10_000)
const LATENCY_SENDS = 30

/** Rows inserted, updated and deleted in every table so far (the statistics of committed transactions). */
async function rowsWritten(url: string): Promise<number> {
  // Backends report their counts at the end of a transaction at most once a second, else after 10 s idle.
  await new Promise((resolve) => setTimeout(resolve, 11_000))
  return withPgClient(url, async (client) => {
    const { rows } = await client.query(
      'SELECT sum(n_tup_ins + n_tup_upd + n_tup_del)::int AS n FROM pg_stat_user_tables',
    )
    return rows[0].n as number
  })
}

/**
 * Scenario: push for one message to a channel of MEMBERS members, every one offline with one device.
 * (1) Rows the send writes (target ≤ 5: one push job, no fan-out in the transaction). (2) From the
 * worker's start to the gateway holding every notification with its badge, against POSTing the
 * same requests (badges precomputed) in a plain sequential loop (target ≤ 10×). (3) A lone sender's
 * p50 with push on against off (target ≤ 1.2×).
 */
export async function push(host: DatabaseHost): Promise<Figure[]> {
  // Gorush's answer: every notification taken.
  const gateway = await startLoopbackReceiver('/api/push', (body) => {
    const n = (JSON.parse(body) as { notifications: unknown[] }).notifications.length
    return { status: 200, answer: `{"counts":${n},"logs":[],"success":"ok"}`, units: n }
  })
  const gatewayUrl = gateway.url
  const database = await createScenarioDatabase(host, 'push')
  const conversationId = await withPgClient(database.url, async (client) => {
    await client.query(
      `INSERT INTO users (handle, display_name) SELECT 'push-' || i, 'Member ' || i FROM generate_series(0, ${MEMBERS}) i`,
    )
    const { rows } = await client.query(
      `INSERT INTO conversations (type, title) VALUES ('GROUP', 'everyone') RETURNING id`,
    )
    const id = rows[0].id as string
    await client.query(
      `INSERT INTO conversation_members (conversation_id, user_id, role)
       SELECT $1, u.id, CASE WHEN u.handle = 'push-0' THEN 'OWNER' ELSE 'MEMBER' END::"MemberRole" FROM users u`,
      [id],
    )
    await client.query(`INSERT INTO push_devices (user_id, platform, token, token_sha256)
      SELECT u.id, 'APNS', md5(u.handle) || md5(u.handle || 'x'), sha256(convert_to(md5(u.handle) || md5(u.handle || 'x'), 'UTF8'))
      FROM users u WHERE u.handle <> 'push-0'`)
    await client.query('ANALYZE')
    return Number(id)
  })
  const parley = await startParley(database.url)
  const token = await tokenFor('push-0')
  let sent = 0
  const send = async () => {
    const started = performance.now()
    const response = await fetch(parley.endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({
        query: 'mutation($i: SendMessageInput!) { sendMessage(input: $i) { message { seq } } }',
        variables: {
          i: {
            conversationId: encodeGlobalId('Conversation', conversationId),
            clientMessageId: `push-bench-${++sent}`,
            content: { text: { text: 'hello everyone' } },
          },
        },
      }),
    })
    const body = (await response.json()) as { errors?: unknown }
    if (body.errors) throw new Error(JSON.stringify(body.errors))
    return performance.now() - started
  }
  try {
    // (3) first, while nobody has unread messages to count: alternating blocks, push off and on (jobs wait).
    const on: number[] = []
    const off: number[] = []
    for (let block = 0; block < 6; block++) {
      parley.app.settings.push = { gatewayUrl: block % 2 ? gatewayUrl : null, preview: 'full' }
      for (let i = 0; i < LATENCY_SENDS / 3; i++) (block % 2 ? on : off).push(await send())
    }
    await withPgClient(database.url, (client) => client.query('DELETE FROM push_jobs'))
    // (1) One send with push on.
    parley.app.settings.push = { gatewayUrl, preview: 'full' }
    const before = await rowsWritten(database.url)
    await send()
    const rows = (await rowsWritten(database.url)) - before
    // (2) The worker sends the job; then the same requests by a plain loop.
    gateway.reset()
    const started = performance.now()
    const worker = startPushWorker(parley.app, { pollMs: 20 })
    await gateway.received(MEMBERS)
    const pushMs = performance.now() - started
    await worker.stop()
    const bodies = gateway.bodies()
    gateway.reset()
    const loopStarted = performance.now()
    for (const body of bodies)
      await (await fetch(gatewayUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body })).text()
    const loopMs = performance.now() - loopStarted
    return [
      {
        scenario: `push: one message to ${MEMBERS} offline members with a device each`,
        metric: 'rows written by the send',
        value: String(rows),
        baseline: 'target 5',
        ratio: rows / 5,
        target: '≤ 5 rows',
        met: rows <= 5,
      },
      {
        scenario: `push: until the gateway holds all ${MEMBERS} notifications with badges (${bodies.length} requests)`,
        metric: 'ms',
        value: pushMs.toFixed(0),
        baseline: `${loopMs.toFixed(0)} (the same requests, badges precomputed, by a sequential fetch loop)`,
        ratio: pushMs / loopMs,
        target: '≤ 10',
        met: pushMs / loopMs <= 10,
      },
      loneSenderFigure(`push: a lone sender into the ${MEMBERS}-member channel, push on`, on, off, 'push off'),
    ]
  } finally {
    await parley.close()
    await database.drop()
    await gateway.close()
  }
}
