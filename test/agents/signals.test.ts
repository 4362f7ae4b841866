import { setTimeout as sleep } from 'node:timers/promises'
import { describe, expect, it } from 'vitest'
import { codes, newUsers } from '../support/harness.ts'
import { liveServer, subscribeWs, waitForSubscriptions } from '../support/server.ts'
import { createGroup } from '../support/operations.ts'
import { AgentEvents, SendSignal, TypingStatus } from '../support/agents.ts'

const instance = liveServer()

describe('signals and agent status', () => {
  it('delivers a signal to every member, or only to toUserIds, with its payload, never stored', async () => {
    const [caller, callee, bystander] = await newUsers(3)
    const group = await createGroup(caller!, [callee!, bystander!])
    const toCallee = subscribeWs(instance.connect(callee!.token), AgentEvents, { conversationId: group.id })
    const toBystander = subscribeWs(instance.connect(bystander!.token), AgentEvents, { conversationId: group.id })
    await waitForSubscriptions(instance.server.app, callee!, 1)
    await waitForSubscriptions(instance.server.app, bystander!, 1)
    const invite = { room: 'r-1', media: ['audio', 'video'] }
    await caller!.run(SendSignal, {
      conversationId: group.id,
      type: 'rtc.call',
      payload: invite,
      toUserIds: [callee!.id],
    })
    await caller!.run(SendSignal, { conversationId: group.id, type: 'rtc.participant.connected' })
    const [first, second] = await toCallee.waitFor(2)
    expect(first!.conversationEvents).toMatchObject({
      __typename: 'SignalEvent',
      conversationId: group.id,
      from: { id: caller!.id },
      type: 'rtc.call',
      payload: invite,
    })
    expect(second!.conversationEvents).toMatchObject({ type: 'rtc.participant.connected', payload: null })
    await toBystander.waitFor(1)
    await sleep(200)
    expect(toBystander.events.map((e) => e.conversationEvents)).toMatchObject([
      { __typename: 'SignalEvent', type: 'rtc.participant.connected' },
    ])
  })

  it('refuses non-members (NOT_FOUND), bad types and payloads over 4 KB', async () => {
    const [owner, outsider] = await newUsers(2)
    const group = await createGroup(owner!, [])
    expect(codes(await outsider!.try(SendSignal, { conversationId: group.id, type: 'rtc.call' }))).toEqual([
      'NOT_FOUND',
    ])
    expect(codes(await owner!.try(SendSignal, { conversationId: group.id, type: 'rtc call' }))).toEqual([
      'BAD_USER_INPUT',
    ])
    expect(
      codes(await owner!.try(SendSignal, { conversationId: group.id, type: 'x', payload: { blob: 'a'.repeat(5000) } })),
    ).toEqual(['BAD_USER_INPUT'])
    expect(codes(await outsider!.try(TypingStatus, { conversationId: group.id, status: 'thinking…' }))).toEqual([
      'NOT_FOUND',
    ])
  })

  it("carries an agent's status on typing, a new status at once", async () => {
    const [agent, member] = await newUsers(2)
    const group = await createGroup(agent!, [member!])
    const stream = subscribeWs(instance.connect(member!.token), AgentEvents, { conversationId: group.id })
    await waitForSubscriptions(instance.server.app, member!, 1)
    await agent!.run(TypingStatus, { conversationId: group.id, status: 'thinking…' })
    await agent!.run(TypingStatus, { conversationId: group.id, status: 'searching the knowledge base…' })
    await agent!.run(TypingStatus, { conversationId: group.id })
    const events = await stream.waitFor(3)
    expect(events.map((e) => e.conversationEvents)).toMatchObject([
      { __typename: 'TypingEvent', user: { id: agent!.id }, status: 'thinking…' },
      { __typename: 'TypingEvent', status: 'searching the knowledge base…' },
      { __typename: 'TypingEvent', status: null },
    ])
    expect(codes(await agent!.try(TypingStatus, { conversationId: group.id, status: 'x'.repeat(65) }))).toEqual([
      'BAD_USER_INPUT',
    ])
  })
})
