import { Webhook as Verifier } from 'standardwebhooks'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { WebhookWorker } from '../../src/domain/webhooks/index.ts'
import { newUser, newUsers, testApp, type TestUser } from '../support/harness.ts'
import { createGroup } from '../support/operations.ts'
import { CreateWebhook, startReceiver, startTestWorker } from '../support/webhooks.ts'
import { Append, Finish, PostSystem, PressCardAction, SendCard, StartStream, UpdateCard } from '../support/agents.ts'

/** card.action and message.stream_ended through the outbox, to a real receiver on loopback. */

let worker: WebhookWorker
beforeAll(() => {
  worker = startTestWorker(testApp().app)
})
afterAll(() => worker.stop())
const receivers: Awaited<ReturnType<typeof startReceiver>>[] = []
afterAll(() => Promise.all(receivers.map((r) => r.close())))

type Body = { type: string; data: Record<string, unknown> }

async function listen(owner: TestUser, events: string[], scope?: 'VIEWER' | 'ALL') {
  const r = await startReceiver()
  receivers.push(r)
  const { secret } = (await owner.run(CreateWebhook, { input: { url: r.url, events: events as never, scope } }))
    .createWebhook
  const verifier = new Verifier(secret)
  const bodies = () => r.requests.map((q) => verifier.verify(q.body, q.headers as Record<string, string>) as Body)
  return { r, bodies }
}

let counter = 0
const clientMessageId = () => `hook-${process.pid}-${++counter}`
const approval = {
  cardType: 'leave_approval',
  data: { leaveId: 78, status: 'pending' },
  actions: [
    { id: 'approve', label: 'Approve' },
    { id: 'reject', label: 'Reject' },
  ],
}

describe('agents through webhooks', () => {
  it("round-trips a card's buttons: card.action to the sender's webhook, the agent updates the card", async () => {
    const [agent, member] = await newUsers(2)
    const group = await createGroup(agent!, [member!])
    const hook = await listen(agent!, ['CARD_ACTION'])
    const card = (
      await agent!.run(SendCard, {
        input: { conversationId: group.id, clientMessageId: clientMessageId(), content: { card: approval } },
      })
    ).sendMessage.message
    await member!.run(PressCardAction, { messageId: card.id, actionId: 'approve', value: { comment: 'ok' } })
    await member!.run(PressCardAction, { messageId: card.id, actionId: 'approve' }) // the same again: nothing sent
    await hook.r.until((requests) => requests.length >= 1, 'card.action')
    const [pressed] = hook.bodies()
    expect(pressed).toMatchObject({
      type: 'card.action',
      data: {
        conversationId: group.id,
        messageId: card.id,
        user: { id: member!.id, handle: member!.handle },
        actionId: 'approve',
        value: { comment: 'ok' },
      },
    })
    expect(pressed!.data).not.toHaveProperty('pts')
    // What the agent does on hearing it: the card shows the outcome.
    const updated = (
      await agent!.run(UpdateCard, { messageId: card.id, data: { leaveId: 78, status: 'approved' }, actions: [] })
    ).updateCard
    expect(updated.content).toMatchObject({ data: { status: 'approved' }, actions: [] })
    await member!.run(PressCardAction, { messageId: card.id, actionId: 'reject' }).catch(() => null)
    await new Promise((resolve) => setTimeout(resolve, 300))
    // The card has no buttons any more: the last press was refused, and nothing more was sent.
    expect(hook.bodies().map((b) => b.data.actionId)).toEqual(['approve'])
  })

  it("delivers a SYSTEM card's presses to ALL-scope webhooks, and message.stream_ended with the final text", async () => {
    const [agent, member] = await newUsers(2)
    const host = await newUser({ operator: true })
    const group = await createGroup(agent!, [member!])
    const hostHook = await listen(host, ['CARD_ACTION'], 'ALL')
    const memberHook = await listen(member!, ['MESSAGE_STREAM_ENDED'])
    const card = (
      await host.run(PostSystem, {
        input: { conversationId: group.id, clientMessageId: clientMessageId(), content: { card: approval } },
      })
    ).postSystemMessage.message
    await member!.run(PressCardAction, { messageId: card.id, actionId: 'reject' })
    await hostHook.r.until((requests) => requests.some((q) => q.body.includes(card.id)), "the SYSTEM card's press")
    expect(hostHook.bodies().find((b) => b.data.messageId === card.id)).toMatchObject({
      type: 'card.action',
      data: { actionId: 'reject', user: { id: member!.id } },
    })

    const stream = (await agent!.run(StartStream, { conversationId: group.id, clientMessageId: clientMessageId() }))
      .startStreamingMessage.message
    await agent!.run(Append, { messageId: stream.id, sequence: 1, delta: 'All ' })
    await agent!.run(Append, { messageId: stream.id, sequence: 2, delta: 'done.' })
    const finished = (await agent!.run(Finish, { messageId: stream.id })).finishStreamingMessage
    await memberHook.r.until((requests) => requests.length >= 1, 'message.stream_ended')
    expect(memberHook.bodies()).toMatchObject([
      {
        type: 'message.stream_ended',
        data: { pts: finished.pts, message: { id: stream.id, status: 'NORMAL', text: 'All done.' } },
      },
    ])
  })
})
