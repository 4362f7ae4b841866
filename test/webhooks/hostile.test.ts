import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { WebhookWorker } from '../../src/domain/webhooks/index.ts'
import { newUsers, testApp } from '../support/harness.ts'
import { createGroup, sendText } from '../support/operations.ts'
import { CreateWebhook, eventually, startTestWorker, ViewerWebhooks } from '../support/webhooks.ts'

let worker: WebhookWorker
beforeAll(() => {
  worker = startTestWorker(testApp().app)
})
afterAll(() => worker.stop())

/** A receiver that treats each request with `respond` (the n-th, 1-based), for answers a plain one never gives. */
async function hostileReceiver(respond: (res: ServerResponse, n: number) => void) {
  let n = 0
  const server = createServer((req, res) => {
    req.resume()
    req.on('end', () => respond(res, ++n))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    requests: () => n,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  }
}

/** Sends one message to a new webhook on `url` and waits until its delivery is DELIVERED. */
async function deliveredTo(url: string) {
  const [alice, bob] = await newUsers(2)
  const group = await createGroup(alice!, [bob!])
  const { webhook } = (await bob!.run(CreateWebhook, { input: { url, events: ['MESSAGE_ADDED'] } })).createWebhook
  await sendText(alice!, group.id, 'to a hostile receiver')
  return eventually(
    async () => (await bob!.run(ViewerWebhooks, {})).viewer.webhooks.find((w) => w.id === webhook.id)!,
    (w) => w.deliveries.edges[0]?.node.status === 'DELIVERED',
  )
}

describe('webhooks: a hostile receiver', () => {
  it('an answer that never ends is read to 64 KB and no further: the 2xx counts', async () => {
    const endless = Buffer.alloc(16 * 1024, 'x')
    const r = await hostileReceiver((res) => {
      res.writeHead(200)
      const more = () => {
        while (res.write(endless));
        res.once('drain', more)
      }
      more()
    })
    const delivered = await deliveredTo(r.url)
    expect(delivered.deliveries.edges.map((e) => [e.node.attempts, e.node.lastStatusCode])).toEqual([[1, 200]])
    await r.close()
  })

  it('a receiver that does not answer costs one attempt of 10 s; the retry delivers', async () => {
    const r = await hostileReceiver((res, n) => {
      if (n > 1) res.writeHead(204).end()
    })
    const delivered = await deliveredTo(r.url)
    expect(delivered.deliveries.edges.map((e) => [e.node.attempts, e.node.lastStatusCode, e.node.lastError])).toEqual([
      [2, 204, null],
    ])
    expect(r.requests()).toBe(2)
    await r.close()
  })
})
