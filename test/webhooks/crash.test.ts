import { afterAll, describe, expect, it } from 'vitest'
import { parseId } from '../../src/domain/core/ids.ts'
import { sendThenCrash } from '../support/crash.ts'
import { newUsers, testApp } from '../support/harness.ts'
import { createGroup } from '../support/operations.ts'
import { spawnInstance } from '../support/server.ts'
import { CreateWebhook, startReceiver, WEBHOOK_TEST_ENV } from '../support/webhooks.ts'

const cleanup: (() => unknown)[] = []
afterAll(() => Promise.all(cleanup.map((c) => c())))

describe('webhooks: a crash between commit and delivery', () => {
  it('loses nothing: killed with SIGKILL right after the commit, the message is delivered once a server runs again', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    const r = await startReceiver()
    cleanup.push(r.close)
    const { webhook, secret } = (await bob!.run(CreateWebhook, { input: { url: r.url, events: ['MESSAGE_ADDED'] } }))
      .createWebhook

    expect(await sendThenCrash(alice!, group.id)).toEqual([null, 'SIGKILL'])
    // The message and its outbox row were committed together before the kill.
    const rows = await testApp().db.$queryRaw<{ status: string }[]>`
      SELECT d.status::text FROM webhook_deliveries d WHERE d.webhook_id = ${parseId(webhook.id, 'Webhook')}`
    expect(rows).toHaveLength(1)

    const instance = await spawnInstance(WEBHOOK_TEST_ENV)
    cleanup.push(() => instance.child.kill('SIGKILL'))
    await r.until((requests) => requests.length >= 1)
    const { Webhook } = await import('standardwebhooks')
    const body = new Webhook(secret).verify(r.requests[0]!.body, r.requests[0]!.headers as Record<string, string>)
    expect(body).toMatchObject({
      type: 'message.added',
      data: { conversationId: group.id, message: { text: 'sent just before the crash' } },
    })
  })
})
