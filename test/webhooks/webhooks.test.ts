import { Webhook as Verifier, WebhookVerificationError } from 'standardwebhooks'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { WebhookWorker } from '../../src/domain/webhooks/index.ts'
import { createMetrics } from '../../src/ops/metrics.ts'
import { codes, newUser, newUsers, testApp, type TestUser } from '../support/harness.ts'
import { AddReaction } from '../support/interactions.ts'
import { EditMessage, RecallMessage } from '../support/lifecycle.ts'
import { createGroup, RemoveMember, SendMessage, sendText } from '../support/operations.ts'
import {
  CreateWebhook,
  DeleteWebhook,
  eventually,
  RotateWebhookSecret,
  startReceiver,
  startTestWorker,
  TEST_RETRY_SCHEDULE_MS,
  UpdateWebhook,
  ViewerWebhooks,
} from '../support/webhooks.ts'

let worker: WebhookWorker
beforeAll(() => {
  worker = startTestWorker(testApp().app)
})
afterAll(() => worker.stop())

const receivers: Awaited<ReturnType<typeof startReceiver>>[] = []
afterAll(() => Promise.all(receivers.map((r) => r.close())))
async function receiver(answer?: (n: number) => number, headers?: Record<string, string>) {
  const r = await startReceiver(answer, headers)
  receivers.push(r)
  return r
}

async function hook(
  owner: TestUser,
  url: string,
  extra: { scope?: 'VIEWER' | 'ALL'; conversationIds?: string[] } = {},
) {
  return (
    await owner.run(CreateWebhook, {
      input: { url, events: ['MESSAGE_ADDED', 'MESSAGE_EDITED', 'MESSAGE_RECALLED'], ...extra },
    })
  ).createWebhook
}

const deliveriesOf = async (owner: TestUser, webhookId: string) =>
  (await owner.run(ViewerWebhooks, {})).viewer.webhooks.find((w) => w.id === webhookId)!

describe('webhooks: the owner’s CRUD', () => {
  it('creates with a secret shown once and sealed at rest, lists, updates and deletes', async () => {
    const owner = await newUser()
    const created = await hook(owner, 'http://127.0.0.1:9/first')
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    expect(Buffer.from(created.secret.slice(6), 'base64')).toHaveLength(32)
    expect(created.webhook).toMatchObject({
      scope: 'VIEWER',
      active: true,
      conversationIds: null,
      disabledReason: null,
    })
    const [stored] = await testApp().db.$queryRaw<{ secret: string }[]>`
      SELECT secret FROM webhooks WHERE url = 'http://127.0.0.1:9/first' ORDER BY id DESC LIMIT 1`
    expect(stored!.secret).not.toContain(created.secret.slice(6))

    const listed = await owner.run(ViewerWebhooks, {})
    expect(listed.viewer.webhooks.map((w) => w.id)).toEqual([created.webhook.id])
    const updated = await owner.run(UpdateWebhook, {
      id: created.webhook.id,
      input: { url: 'http://127.0.0.1:9/second', events: ['MESSAGE_ADDED'] },
    })
    expect(updated.updateWebhook).toMatchObject({ url: 'http://127.0.0.1:9/second', events: ['MESSAGE_ADDED'] })
    expect(await owner.run(DeleteWebhook, { id: created.webhook.id })).toEqual({ deleteWebhook: true })
    expect((await owner.run(ViewerWebhooks, {})).viewer.webhooks).toEqual([])
    expect(codes(await owner.try(DeleteWebhook, { id: created.webhook.id }))).toEqual(['NOT_FOUND'])
  })

  it('keeps others out: NOT_FOUND for another’s webhook, FORBIDDEN for scope ALL unless an operator', async () => {
    const [owner, other] = await newUsers(2)
    const { webhook } = await hook(owner!, 'http://127.0.0.1:9/x')
    expect(codes(await other!.try(UpdateWebhook, { id: webhook.id, input: { active: false } }))).toEqual(['NOT_FOUND'])
    expect(codes(await other!.try(RotateWebhookSecret, { id: webhook.id }))).toEqual(['NOT_FOUND'])
    expect(codes(await other!.try(DeleteWebhook, { id: webhook.id }))).toEqual(['NOT_FOUND'])
    expect(
      codes(
        await other!.try(CreateWebhook, {
          input: { url: 'http://127.0.0.1:9/', events: ['MESSAGE_ADDED'], scope: 'ALL' },
        }),
      ),
    ).toEqual(['FORBIDDEN'])
    const operator = await newUser({ operator: true })
    expect((await hook(operator, 'http://127.0.0.1:9/all', { scope: 'ALL' })).webhook.scope).toBe('ALL')
  })

  it('refuses private, link-local and metadata addresses and other schemes, storing nothing; at most 10 a user', async () => {
    const owner = await newUser()
    for (const url of [
      'http://10.0.0.1/hook',
      'http://169.254.169.254/latest/meta-data',
      'http://192.168.1.1/',
      'http://[fd00:ec2::254]/',
      'http://[::ffff:10.0.0.1]/',
      'ftp://127.0.0.1/',
      'not a url',
    ]) {
      const answer = await owner.try(CreateWebhook, { input: { url, events: ['MESSAGE_ADDED'] } })
      expect(codes(answer), url).toEqual(['BAD_USER_INPUT'])
    }
    expect((await owner.run(ViewerWebhooks, {})).viewer.webhooks).toEqual([])
    for (let i = 0; i < 10; i++) await hook(owner, `http://127.0.0.1:9/${i}`)
    expect(
      codes(await owner.try(CreateWebhook, { input: { url: 'http://127.0.0.1:9/11', events: ['MESSAGE_ADDED'] } })),
    ).toEqual(['LIMIT_REACHED'])
  })
})

describe('webhooks: delivery', () => {
  it('signs as Standard Webhooks: the verifier accepts it, the body carries the API’s ids, webhook-id is the delivery’s id', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    const r = await receiver()
    const { webhook, secret } = await hook(bob!, r.url)
    const sent = (
      await alice!.run(SendMessage, {
        input: {
          conversationId: group.id,
          clientMessageId: 'signed',
          content: { text: { text: 'hi @bob' } },
          mentionUserIds: [bob!.id],
        },
      })
    ).sendMessage.message
    await r.until((requests) => requests.length === 1)
    const [request] = r.requests
    const verified = new Verifier(secret).verify(request!.body, request!.headers as Record<string, string>)
    expect(verified).toMatchObject({
      type: 'message.added',
      data: {
        conversationId: group.id,
        pts: sent.pts,
        message: {
          id: sent.id,
          seq: sent.seq,
          senderType: 'USER',
          sender: { id: alice!.id, handle: alice!.handle },
          kind: 'TEXT',
          text: 'hi @bob',
          mentionsRecipient: true,
        },
      },
    })
    const deliveries = await eventually(
      () => deliveriesOf(bob!, webhook.id),
      (w) => w.deliveries.edges[0]?.node.status === 'DELIVERED',
    )
    expect(deliveries.deliveries.edges.map((e) => e.node)).toEqual([
      expect.objectContaining({
        id: request!.headers['webhook-id'],
        eventType: 'MESSAGE_ADDED',
        pts: sent.pts,
        attempts: 1,
        lastStatusCode: 204,
        conversation: { id: group.id },
      }),
    ])
    expect(() => new Verifier(secret).verify(request!.body + ' ', request!.headers as Record<string, string>)).toThrow(
      WebhookVerificationError,
    )
  })

  it('sends exactly what the owner sees: not its own messages, not one directed to another, nothing after removal', async () => {
    const [alice, bob, carol] = await newUsers(3)
    const group = await createGroup(alice!, [bob!, carol!])
    const r = await receiver()
    const { webhook } = await hook(bob!, r.url)
    await bob!.run(SendMessage, {
      input: { conversationId: group.id, clientMessageId: 'own', content: { text: { text: 'my own' } } },
    })
    await alice!.run(SendMessage, {
      input: {
        conversationId: group.id,
        clientMessageId: 'directed',
        content: { text: { text: 'for carol' } },
        visibleToUserIds: [carol!.id],
      },
    })
    const seen = (await sendText(alice!, group.id, 'for everyone')).message
    await alice!.run(EditMessage, { messageId: seen.id, text: 'for everyone, edited' })
    // A recall erases the message from deliveries not sent yet (decision 0284): the edit goes out first.
    await r.until((requests) => requests.length === 2)
    await alice!.run(RecallMessage, { messageId: seen.id })
    await r.until((requests) => requests.length === 3)
    expect(r.delivered().map((b) => [b.type, b.data.message.id, b.data.message.text ?? null])).toEqual([
      ['message.added', seen.id, 'for everyone'],
      ['message.edited', seen.id, 'for everyone, edited'],
      ['message.recalled', seen.id, null],
    ])
    await alice!.run(RemoveMember, { conversationId: group.id, userId: bob!.id })
    await sendText(alice!, group.id, 'after bob left')
    // The outbox is written in the send's transaction: no row now means none ever.
    const after = await deliveriesOf(bob!, webhook.id)
    expect(after.deliveries.edges.map((e) => e.node.eventType)).toEqual([
      'MESSAGE_RECALLED',
      'MESSAGE_EDITED',
      'MESSAGE_ADDED',
    ])
  })

  it('reactions: others’ reactions arrive as reactions.changed with the counts, the owner’s own do not', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    const r = await receiver()
    const { webhook } = await bob!
      .run(CreateWebhook, {
        input: { url: r.url, events: ['REACTIONS_CHANGED'] },
      })
      .then((d) => d.createWebhook)
    const m = (await sendText(bob!, group.id, 'react to me')).message
    await bob!.run(AddReaction, { messageId: m.id, emoji: '👍' })
    await alice!.run(AddReaction, { messageId: m.id, emoji: '👍' })
    await r.until((requests) => requests.length === 1)
    expect(r.delivered()).toEqual([
      expect.objectContaining({
        type: 'reactions.changed',
        data: expect.objectContaining({
          message: expect.objectContaining({ id: m.id }),
          reactions: [{ emoji: '👍', count: 2 }],
        }),
      }),
    ])
    expect((await deliveriesOf(bob!, webhook.id)).deliveries.edges).toHaveLength(1)
  })

  it('scope ALL (an operator’s) hears conversations the operator is not in, narrowed by conversationIds', async () => {
    const [alice, bob] = await newUsers(2)
    const [heard, other] = [await createGroup(alice!, [bob!]), await createGroup(alice!, [bob!])]
    const operator = await newUser({ operator: true })
    const r = await receiver()
    await hook(operator, r.url, { scope: 'ALL', conversationIds: [heard.id] })
    await sendText(alice!, other.id, 'not this one')
    const m = (await sendText(alice!, heard.id, 'this one')).message
    await r.until((requests) => requests.length === 1)
    expect(
      r.delivered().map((b) => [b.data.conversationId, b.data.message.id, b.data.message.mentionsRecipient]),
    ).toEqual([[heard.id, m.id, false]])
  })

  it('rotation: the new secret signs from then on, the old one no longer verifies', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    const r = await receiver()
    const { webhook, secret: old } = await hook(bob!, r.url)
    const rotated = (await bob!.run(RotateWebhookSecret, { id: webhook.id })).rotateWebhookSecret
    expect(rotated.secret).not.toBe(old)
    await sendText(alice!, group.id, 'after rotation')
    await r.until((requests) => requests.length === 1)
    const { body, headers } = r.requests[0]!
    expect(new Verifier(rotated.secret).verify(body, headers as Record<string, string>)).toBeTruthy()
    expect(() => new Verifier(old).verify(body, headers as Record<string, string>)).toThrow(WebhookVerificationError)
  })

  it('410 disables the webhook at once', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    const r = await receiver(() => 410)
    const { webhook } = await hook(bob!, r.url)
    await sendText(alice!, group.id, 'gone')
    const disabled = await eventually(
      () => deliveriesOf(bob!, webhook.id),
      (w) => !w.active,
    )
    expect(disabled.disabledReason).toMatch(/410/)
    expect(disabled.deliveries.edges.map((e) => [e.node.status, e.node.attempts, e.node.lastStatusCode])).toEqual([
      ['FAILED', 1, 410],
    ])
    expect(r.requests).toHaveLength(1)
  })

  it('retries per the schedule, then FAILED and disabled; while disabled records PENDING; re-enabling sends the rest in order', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    let healthy = false
    const r = await receiver(() => (healthy ? 200 : 503))
    const { webhook } = await hook(bob!, r.url)
    const first = (await sendText(alice!, group.id, 'first')).message
    const failed = await eventually(
      () => deliveriesOf(bob!, webhook.id),
      (w) => !w.active,
    )
    const attempts = TEST_RETRY_SCHEDULE_MS.length + 1
    expect(r.requests).toHaveLength(attempts)
    expect(new Set(r.requests.map((q) => q.headers['webhook-id'])).size).toBe(1)
    expect(failed.disabledReason).toMatch(new RegExp(`after ${attempts} attempts: HTTP 503`))
    expect(failed.deliveries.edges.map((e) => [e.node.status, e.node.attempts, e.node.lastError])).toEqual([
      ['FAILED', attempts, 'HTTP 503'],
    ])

    const later = [
      (await sendText(alice!, group.id, 'second')).message,
      (await sendText(alice!, group.id, 'third')).message,
    ]
    const pending = await deliveriesOf(bob!, webhook.id)
    expect(pending.deliveries.edges.map((e) => e.node.status)).toEqual(['PENDING', 'PENDING', 'FAILED'])

    healthy = true
    await bob!.run(UpdateWebhook, { id: webhook.id, input: { active: true } })
    await r.until((requests) => requests.filter((q) => q.answered === 200).length === 3)
    expect(r.delivered().map((b) => b.data.message.id)).toEqual([first.id, ...later.map((m) => m.id)])
    const done = await eventually(
      () => deliveriesOf(bob!, webhook.id),
      (w) => w.deliveries.edges.every((e) => e.node.status === 'DELIVERED'),
    )
    expect(done).toMatchObject({ active: true, disabledReason: null })
    expect(done.deliveries.edges.map((e) => e.node.attempts)).toEqual([1, 1, attempts + 1])
  })

  it('follows no redirect: a 3xx is a failed attempt, and the Location is never requested', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    const elsewhere = await receiver()
    const r = await receiver(() => 302, { location: elsewhere.url })
    const { webhook } = await hook(bob!, r.url)
    await sendText(alice!, group.id, 'redirected')
    const failed = await eventually(
      () => deliveriesOf(bob!, webhook.id),
      (w) => !w.active,
    )
    expect(failed.deliveries.edges.map((e) => [e.node.status, e.node.lastStatusCode])).toEqual([['FAILED', 302]])
    expect(elsewhere.requests).toEqual([])
  })

  it('metrics: attempts by outcome, their latency, and the oldest pending delivery’s age', async () => {
    const metrics = createMetrics()
    metrics.watchWebhooks(worker)
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    const r = await receiver((n) => (n % 2 ? 500 : 200))
    await hook(bob!, r.url)
    const counted = (t: string) =>
      /parley_webhook_attempts_total\{outcome="delivered"\} [1-9]/.test(t) &&
      /parley_webhook_attempts_total\{outcome="retry"\} [1-9]/.test(t)
    // Every instance's worker (the other test files' too) may take an attempt: send until this one took both kinds.
    for (let sent = 1; sent <= 30 && !counted(await metrics.registry.metrics()); sent++) {
      await sendText(alice!, group.id, `counted ${sent}`)
      await r.until((requests) => requests.filter((q) => q.answered === 200).length === sent)
    }
    const text = await metrics.registry.metrics()
    expect(counted(text)).toBe(true)
    expect(text).toMatch(/parley_webhook_attempt_duration_seconds_count [1-9]/)
    expect(text).toMatch(/parley_webhook_oldest_pending_seconds \d/)
  })
})
