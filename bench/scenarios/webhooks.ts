import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Agent, request } from 'undici'
import { signToken } from '../../src/http/auth/hs256.ts'
import type { LoadClient } from '../client.ts'
import { median, percentile, throughput } from '../measure.ts'
import { AUTH_SECRET, type DatabaseHost, type Figure } from '../support.ts'
import { SENDERS, sendFixture } from './send-throughput.ts'

const CONVERSATIONS = 32
const BACKLOG = Number(process.env.BENCH_WEBHOOK_DELIVERIES ?? 2000)
const RUNS = 3
const LONE_SENDS = 60

/** A loopback receiver answering 204 at once; counts distinct deliveries and keeps their bodies. */
function startReceiver() {
  let seen = new Set<string>()
  let bodies: string[] = []
  let lags: number[] = []
  let waiting: { count: number; resolve(): void } | null = null
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      res.writeHead(204).end()
      const id = String(req.headers['webhook-id'])
      if (seen.has(id)) return
      seen.add(id)
      const body = Buffer.concat(chunks).toString()
      bodies.push(body)
      // The body's timestamp is when the change's transaction wrote the delivery, just before it committed.
      lags.push(Date.now() - Date.parse((JSON.parse(body) as { timestamp: string }).timestamp))
      if (waiting && seen.size >= waiting.count) waiting.resolve()
    })
  })
  return {
    listening: new Promise<string>((resolve) =>
      server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`)),
    ),
    reset() {
      seen = new Set()
      bodies = []
      lags = []
    },
    bodies: () => bodies,
    lags: () => lags,
    received: (count: number) =>
      new Promise<void>((resolve) => {
        waiting = { count, resolve }
        if (seen.size >= count) resolve()
      }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

/**
 * The baseline: the same bodies POSTed to the same receiver by a plain undici loop, one worker per
 * conversation as Parley's order rule allows (the next delivery of a conversation waits for the last).
 */
async function undiciLoop(url: string, bodies: string[]): Promise<number> {
  const dispatcher = new Agent({ connections: CONVERSATIONS })
  try {
    return await throughput(bodies.length, CONVERSATIONS, async (i) => {
      const response = await request(url, {
        method: 'POST',
        dispatcher,
        headers: { 'content-type': 'application/json', 'webhook-id': `baseline-${i}` },
        body: bodies[i]!,
      })
      await response.body.dump()
    })
  } finally {
    await dispatcher.close()
  }
}

/**
 * Scenario: webhooks through the outbox. One ALL-scope webhook (an operator's) on 32 conversations with
 * 32 senders. (1) Deliveries per second: a backlog of sends recorded while the webhook is disabled,
 * drained after it is enabled, against the same bodies POSTed by an undici loop (target ≥ 0.5×).
 * (2) Commit to receipt at the senders' full load (p99, target ≤ 100 ms). (3) A lone sender's p50
 * with the webhook against with none (target ≤ 1.2×).
 */
export async function webhooks(host: DatabaseHost, client: LoadClient): Promise<Figure[]> {
  const receiver = startReceiver()
  const url = await receiver.listening
  const fixture = await sendFixture(host, client, 'webhooks', CONVERSATIONS, {
    WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8',
  })
  const operator = await signToken(AUTH_SECRET, 'webhook-bench-operator', { operator: true })
  const gql = async <T>(query: string, variables: object): Promise<T> => {
    const response = await fetch(fixture.parley.endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${operator}` },
      body: JSON.stringify({ query, variables }),
    })
    const body = (await response.json()) as { data: T; errors?: unknown }
    if (body.errors) throw new Error(JSON.stringify(body.errors))
    return body.data
  }
  const createWebhook = async () =>
    (
      await gql<{ createWebhook: { webhook: { id: string } } }>(
        'mutation($i: CreateWebhookInput!) { createWebhook(input: $i) { webhook { id } } }',
        { i: { url, events: ['MESSAGE_ADDED'], scope: 'ALL' } },
      )
    ).createWebhook.webhook.id
  const setActive = (id: string, active: boolean) =>
    gql('mutation($id: ID!, $i: UpdateWebhookInput!) { updateWebhook(id: $id, input: $i) { id } }', {
      id,
      i: { active },
    })
  const deleteWebhook = (id: string) => gql('mutation($id: ID!) { deleteWebhook(id: $id) }', { id })
  try {
    let webhook = await createWebhook()
    // (1) Drain rates, alternating with the baseline; the first round warms up.
    const drained: number[] = []
    const baseline: number[] = []
    for (let run = 0; run <= RUNS; run++) {
      await setActive(webhook, false)
      await fixture.viaParley(BACKLOG, SENDERS)
      receiver.reset()
      const started = performance.now()
      await setActive(webhook, true)
      await receiver.received(BACKLOG)
      const rate = BACKLOG / ((performance.now() - started) / 1000)
      const bodies = receiver.bodies()
      receiver.reset()
      const plain = await undiciLoop(url, bodies)
      if (run === 0) continue
      drained.push(rate)
      baseline.push(plain)
    }
    // (2) Live: every send delivered while the senders keep the server busy.
    receiver.reset()
    const { ms: sendMs } = await fixture.viaParley(BACKLOG, SENDERS)
    await receiver.received(BACKLOG)
    const p99 = percentile(receiver.lags(), 99)
    // (3) A lone sender, blocks alternating between the webhook and none.
    const withHook: number[] = []
    const without: number[] = []
    for (let run = 0; run < RUNS * 2 + 2; run++) {
      const { ms } = await fixture.viaParley(LONE_SENDS, 1)
      if (run > 1) (webhook ? withHook : without).push(...ms)
      if (webhook) {
        await deleteWebhook(webhook)
        webhook = ''
      } else webhook = await createWebhook()
    }
    const [rate, plain] = [median(drained), median(baseline)]
    const [lone, bare] = [median(withHook), median(without)]
    return [
      {
        scenario: `webhooks: deliveries to a loopback receiver, ${CONVERSATIONS} conversations, one webhook (a backlog of ${BACKLOG} drained)`,
        metric: 'deliveries/s',
        value: rate.toFixed(0),
        baseline: `${plain.toFixed(0)} (the same POSTs by an undici loop, ${CONVERSATIONS} at a time)`,
        ratio: rate / plain,
        target: '≥ 0.5',
        met: rate / plain >= 0.5,
      },
      {
        scenario: `webhooks: commit to receipt while ${SENDERS} senders send`,
        metric: 'p99 ms',
        value: p99.toFixed(0),
        baseline: `${percentile(sendMs, 99).toFixed(0)} (the sends' own p99)`,
        ratio: p99 / 100,
        target: '≤ 100 ms',
        met: p99 <= 100,
      },
      {
        scenario: 'webhooks: a lone sender with one matching webhook',
        metric: 'p50 ms',
        value: lone.toFixed(2),
        baseline: `${bare.toFixed(2)} (no webhook)`,
        ratio: lone / bare,
        target: '≤ 1.2',
        met: lone / bare <= 1.2,
      },
    ]
  } finally {
    await fixture.close()
    await receiver.close()
  }
}
