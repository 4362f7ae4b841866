// npm run soak [-- --subscribers N --senders N --minutes N]: that many graphql-ws subscribers (also
// SOAK_SUBSCRIBERS, default 1,000) and senders (SOAK_SENDERS, 16) against one Parley for that long
// (SOAK_MINUTES, 10), printing its RSS and event-loop delay each minute; first its CPU while every
// subscription is open and idle. Not part of npm test. Bounded: the senders stop at the deadline, then
// the run waits at most 30 s for the last deliveries.
import { parseArgs } from 'node:util'
import { encodeGlobalId } from '../src/domain/core/ids.ts'
import { startClient } from './client.ts'
import { insertGroups, insertUsers, withClient } from './setup.ts'
import { startParleyProcess } from './server-process.ts'
import { createScenarioDatabase, machine, openDatabaseHost, tokenFor } from './support.ts'

const { values: args } = parseArgs({
  options: { subscribers: { type: 'string' }, senders: { type: 'string' }, minutes: { type: 'string' } },
})
const setting = (name: string, arg: string | undefined, fallback: number) => {
  const value = Number(arg ?? process.env[name] ?? fallback)
  if (!(value > 0)) throw new Error(`${name} must be a positive number`)
  return value
}
const MINUTES = setting('SOAK_MINUTES', args.minutes, 10)
const SUBSCRIBERS = setting('SOAK_SUBSCRIBERS', args.subscribers, 1000)
const SENDERS = setting('SOAK_SENDERS', args.senders, 16)
/** Messages per second per sender. */
const RATE = setting('SOAK_RATE', undefined, 5)
/** Readers per group: every message reaches this many subscribers. */
const GROUP_READERS = 20
/**
 * The idle server is left this long after the subscriptions opened, then its CPU read over IDLE_MS:
 * V8's memory reducer collects what opening them left some 25–30 s later (decision 0235), which is
 * not an idle server's work.
 */
const IDLE_SETTLE_MS = 45_000
const IDLE_MS = 60_000
/** The last minute's RSS and mean event-loop delay may differ from the second's by this much (issue 49). */
const FLAT = 0.1

const SEND = `mutation SoakSend($input: SendMessageInput!) { sendMessage(input: $input) { message { id } } }`
const FOLLOW = `subscription SoakFollow($id: ID!) { conversationEvents(conversationId: $id) { ... on MessageEvent { pts message { id } } } }`

const host = await openDatabaseHost()
const database = await createScenarioDatabase(host, 'soak')
// As a user runs it (its own process, production defaults, rate limits on), with the default pool
// size and metrics on for its own event-loop delay.
// The default rate limits, as a deployment has them (the senders are AGENT users).
const parley = await startParleyProcess(database.url, { poolSize: 20, env: { METRICS: 'true', RATE_LIMITS: '' } })
const client = startClient()
const mib = (bytes: number) => Math.round(bytes / 2 ** 20)

/** The server's own samples from /metrics (prom-client resets the event-loop histogram at each scrape). */
async function scrape(): Promise<Map<string, number>> {
  const text = await (await fetch(new URL('/metrics', parley.endpoint))).text()
  return new Map(
    text
      .split('\n')
      .filter((l) => l && !l.startsWith('#'))
      .map((l) => [l.slice(0, l.lastIndexOf(' ')), Number(l.slice(l.lastIndexOf(' ') + 1))]),
  )
}
const openSubscriptions = async () => (await scrape()).get('parley_subscriptions_open{field="conversationEvents"}') ?? 0

try {
  const groups = Math.ceil(SUBSCRIBERS / GROUP_READERS)
  const fixture = await withClient(database.url, async (pg) => {
    const readers = await insertUsers(pg, 'soak-reader', SUBSCRIBERS)
    const senders = await insertUsers(pg, 'soak-sender', SENDERS)
    // Agents: the default limits let them send faster than people (README "Rate limits").
    await pg.query(`UPDATE users SET kind = 'AGENT' WHERE id = ANY($1::bigint[])`, [senders])
    const conversations: number[] = []
    for (let g = 0; g < groups; g++)
      conversations.push(
        ...(await insertGroups(pg, 1, [...readers.slice(g * GROUP_READERS, (g + 1) * GROUP_READERS), ...senders])),
      )
    return { conversations }
  })
  const conversationIds = fixture.conversations.map((id) => encodeGlobalId('Conversation', id))
  const wsUrl = parley.endpoint.replace(/^http/, 'ws')
  const calls = await Promise.all(
    Array.from({ length: SUBSCRIBERS }, async (_, r) => ({
      token: await tokenFor(`soak-reader-${r}`),
      query: FOLLOW,
      variables: { id: conversationIds[Math.floor(r / GROUP_READERS)] },
    })),
  )
  await client.soakSubscribe({ wsUrl, calls })
  while ((await openSubscriptions()) < SUBSCRIBERS) await new Promise((resolve) => setTimeout(resolve, 200))
  console.error(
    `[soak] ${SUBSCRIBERS} subscriptions open in ${groups} groups; ${SENDERS} senders at ${RATE}/s each for ${MINUTES} min`,
  )

  // Idle: what 10,000 open subscriptions cost with nothing to deliver (keep-alives, sweeps, timers).
  await new Promise((resolve) => setTimeout(resolve, IDLE_SETTLE_MS))
  const idleFrom = parley.cpuSeconds()
  await new Promise((resolve) => setTimeout(resolve, IDLE_MS))
  const idleCore = (parley.cpuSeconds() - idleFrom) / (IDLE_MS / 1000)
  console.error(`[soak] idle with ${SUBSCRIBERS} subscriptions: ${(idleCore * 100).toFixed(1)}% of a core`)

  await scrape()
  const tokens = await Promise.all(Array.from({ length: SENDERS }, (_, s) => tokenFor(`soak-sender-${s}`)))
  const sending = client.soakSend({
    endpoint: parley.endpoint,
    query: SEND,
    tokens,
    conversationIds,
    rate: RATE,
    durationMs: MINUTES * 60_000,
  })
  const rows: string[] = []
  /** Each minute's RSS and mean event-loop delay, for the flatness check. */
  const samples: { rss: number; delay: number }[] = []
  let last = await client.soakCounters()
  for (let minute = 1; minute <= Math.ceil(MINUTES); minute++) {
    await Promise.race([
      new Promise((resolve) => setTimeout(resolve, 60_000)),
      minute === Math.ceil(MINUTES) ? sending : new Promise(() => {}),
    ])
    const now = await client.soakCounters()
    const server = await scrape()
    const ms = (name: string) => ((server.get(name) ?? NaN) * 1000).toFixed(1)
    samples.push({ rss: parley.rssBytes(), delay: server.get('nodejs_eventloop_lag_mean_seconds') ?? NaN })
    const row = `| ${minute} | ${mib(samples.at(-1)!.rss)} | ${mib(server.get('nodejs_heap_size_used_bytes') ?? NaN)} | ${ms('nodejs_eventloop_lag_mean_seconds')} | ${ms('nodejs_eventloop_lag_p50_seconds')} | ${ms('nodejs_eventloop_lag_p99_seconds')} | ${ms('nodejs_eventloop_lag_max_seconds')} | ${now.sent - last.sent} | ${now.events - last.events} | ${now.sendErrors + now.streamErrors} |`
    rows.push(row)
    console.error(`[soak] ${row}`)
    last = now
  }
  await sending
  // Every message reaches the GROUP_READERS subscribers of its group.
  const expected = (await client.soakCounters()).sent * GROUP_READERS
  const settle = Date.now() + 30_000
  while ((await client.soakCounters()).events < expected && Date.now() < settle)
    await new Promise((resolve) => setTimeout(resolve, 200))
  const final = await client.soakCounters()
  const m = machine()
  // The last minute against the second (the first includes the start of the load).
  const [second, lastMinute] = [samples[Math.min(1, samples.length - 1)]!, samples.at(-1)!]
  const drift = (key: 'rss' | 'delay') => lastMinute[key] / second[key] - 1
  const flat = Math.abs(drift('rss')) <= FLAT && Math.abs(drift('delay')) <= FLAT
  const percent = (x: number) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)}%`
  console.log(`Soak: ${SUBSCRIBERS} graphql-ws subscribers (${groups} groups of ${GROUP_READERS}), ${SENDERS} senders at ${RATE} messages/s each, ${MINUTES} min, pool of 20;
${m.cores} cores (${m.cpu}), Node.js ${m.node}, PostgreSQL ${host.version}; Parley in its own process as \`npm start\` runs it (production, default rate limits; the senders are AGENT users), the clients in another.

Idle with ${SUBSCRIBERS} open subscriptions (${IDLE_MS / 1000} s, after ${IDLE_SETTLE_MS / 1000} s at rest): ${(idleCore * 100).toFixed(1)}% of a core (target ≤ 5%).

| minute | RSS MiB | heap MiB | event-loop delay mean ms | p50 ms | p99 ms | max ms | sent | delivered | errors |
|---|---|---|---|---|---|---|---|---|---|
${rows.join('\n')}

Sent ${final.sent}, delivered ${final.events} of ${expected} expected, ${final.sendErrors} failed sends, ${final.streamErrors} failed streams; ${await openSubscriptions()} subscriptions open at the end.
Last minute against the second: RSS ${percent(drift('rss'))}, mean event-loop delay ${percent(drift('delay'))} (flat within ${FLAT * 100}%: ${flat ? 'yes' : 'no'}).`)
  if (final.events !== expected || final.sendErrors || final.streamErrors || !flat || idleCore > 0.05)
    process.exitCode = 1
} finally {
  await client.closeSoak().catch(() => {})
  client.close()
  await parley.close()
  await database.drop()
  await host.stop()
}
