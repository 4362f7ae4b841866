import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseId, parseMessageId } from '../../src/domain/core/ids.ts'
import type { WebhookWorker } from '../../src/domain/webhooks/index.ts'
import { newUsers, testApp } from '../support/harness.ts'
import { createGroup, sendText } from '../support/operations.ts'
import { CreateWebhook, startReceiver, startTestWorker } from '../support/webhooks.ts'

let worker: WebhookWorker
beforeAll(() => {
  worker = startTestWorker(testApp().app)
})
afterAll(() => worker.stop())

describe('webhooks: order', () => {
  it('delivers each conversation in pts order under 20 concurrent senders while the receiver fails every third request', async () => {
    const [listener, ...senders] = await newUsers(21)
    const groups = [
      await createGroup(senders[0]!, [listener!, ...senders.slice(1)]),
      await createGroup(senders[0]!, [listener!, ...senders.slice(1)]),
    ]
    const r = await startReceiver((n) => (n % 3 === 0 ? 500 : 200))
    await listener!.run(CreateWebhook, { input: { url: r.url, events: ['MESSAGE_ADDED'] } })

    const sent = await Promise.all(
      senders.map(async (sender, i) => {
        const mine = []
        for (let k = 0; k < 5; k++) mine.push((await sendText(sender, groups[(i + k) % 2]!.id, `${i}.${k}`)).message)
        return mine
      }),
    )
    // Each conversation's pts, as its deliveries must arrive.
    const expected = groups.map((g) =>
      sent
        .flat()
        .filter((m) => parseMessageId(m.id).conversationId === parseId(g.id, 'Conversation'))
        .map((m) => m.pts)
        .sort((a, b) => a - b),
    )
    await r.until((requests) => requests.filter((q) => q.answered === 200).length >= 100, '100 deliveries')
    for (const [i, group] of groups.entries()) {
      const received = r
        .delivered()
        .filter((b) => b.data.conversationId === group.id)
        .map((b) => b.data.pts)
      // Each succeeded once, in pts order; a failed attempt was repeated before anything after it.
      expect(received).toEqual(expected[i])
    }
    expect(r.requests.some((q) => q.answered === 500)).toBe(true)
    await r.close()
  })
})
