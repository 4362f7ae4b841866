import { Agent, request } from 'undici'
import { signToken } from '../../src/http/auth/hs256.ts'
import type { LoadClient } from '../client.ts'
import { median, percentile, throughput } from '../measure.ts'
import { AUTH_SECRET, type DatabaseHost, type Figure } from '../support.ts'
import { loneSenderFigure, startLoopbackReceiver } from './outbox.ts'
import { SENDERS, sendFixture } from './send-throughput.ts'

const CONVERSATIONS = 32
const BACKLOG = Number(process.env.BENCH_WEBHOOK_DELIVERIES ?? 2000)
const RUNS = 3
const LONE_SENDS = 60

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
  // Counts distinct deliveries (by webhook-id) and how long after its commit each came.
  let seen = new Set<string>()
  let lags: number[] = []
  const receiver = await startLoopbackReceiver('/hook', (body, req) => {
    const id = String(req.headers['webhook-id'])
    if (seen.has(id)) return { status: 204, units: 0 }
    seen.add(id)
    // The body's timestamp is when the change's transaction wrote the delivery, just before it committed.
    lags.push(Date.now() - Date.parse((JSON.parse(body) as { timestamp: string }).timestamp))
    return { status: 204, units: 1 }
  })
  const reset = () => {
    receiver.reset()
    seen = new Set()
    lags = []
  }
  const url = receiver.url
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
      reset()
      const started = performance.now()
      await setActive(webhook, true)
      await receiver.received(BACKLOG)
      const rate = BACKLOG / ((performance.now() - started) / 1000)
      const bodies = receiver.bodies()
      reset()
      const plain = await undiciLoop(url, bodies)
      if (run === 0) continue
      drained.push(rate)
      baseline.push(plain)
    }
    // (2) Live: every send delivered while the senders keep the server busy.
    reset()
    const { ms: sendMs } = await fixture.viaParley(BACKLOG, SENDERS)
    await receiver.received(BACKLOG)
    const p99 = percentile(lags, 99)
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
      loneSenderFigure('webhooks: a lone sender with one matching webhook', withHook, without, 'no webhook'),
    ]
  } finally {
    await fixture.close()
    await receiver.close()
  }
}
