import { describe, expect, it } from 'vitest'
import { codes, newUser, newUsers } from '../support/harness.ts'
import { liveServer, subscribeWs, waitForSubscriptions } from '../support/server.ts'
import { createGroup } from '../support/operations.ts'
import { RecallMessage } from '../support/lifecycle.ts'
import {
  CardChanges,
  CardEvents,
  PostSystem,
  PressCardAction,
  ReadCard,
  SendCard,
  UpdateCard,
} from '../support/agents.ts'

const instance = liveServer()
let counter = 0
const clientMessageId = () => `card-${process.pid}-${++counter}`

const approval = {
  cardType: 'leave_approval',
  data: { leaveId: 78, status: 'pending' },
  actions: [
    { id: 'approve', label: 'Approve', style: 'PRIMARY' as const },
    { id: 'reject', label: 'Reject', style: 'DANGER' as const },
    { id: 'open', label: 'Open', url: 'https://hub.example/leave/78' },
  ],
}

describe('live cards', () => {
  it('updates a card in place: a pts, EDITED live and in changes, no version, status and editedAt unchanged', async () => {
    const [agent, member] = await newUsers(2)
    const group = await createGroup(agent!, [member!])
    const stream = subscribeWs(instance.connect(member!.token), CardEvents, { conversationId: group.id })
    await waitForSubscriptions(instance.server.app, member!, 1)
    const sent = (
      await agent!.run(SendCard, {
        input: { conversationId: group.id, clientMessageId: clientMessageId(), content: { card: approval } },
      })
    ).sendMessage.message
    const card = (await member!.run(ReadCard, { id: sent.id })).node!
    expect(card).toMatchObject({
      content: {
        actions: [
          { id: 'approve', label: 'Approve', style: 'PRIMARY', url: null },
          { id: 'reject', style: 'DANGER' },
          { id: 'open', style: 'DEFAULT', url: 'https://hub.example/leave/78' },
        ],
        updatedAt: null,
        viewerActionId: null,
      },
    })
    await member!.run(PressCardAction, { messageId: sent.id, actionId: 'approve' })
    const updated = (
      await agent!.run(UpdateCard, { messageId: sent.id, data: { leaveId: 78, status: 'approved' }, actions: [] })
    ).updateCard
    expect(updated).toMatchObject({
      pts: sent.pts + 1,
      status: 'NORMAL',
      editedAt: null,
      edits: [],
      content: { cardType: 'leave_approval', data: { leaveId: 78, status: 'approved' }, actions: [] },
    })
    expect(updated.content).toHaveProperty('updatedAt', expect.any(String))
    // Buttons gone, the presser still reads what they chose.
    expect((await member!.run(ReadCard, { id: sent.id })).node!.content).toMatchObject({ viewerActionId: 'approve' })
    const events = await stream.waitFor(2)
    expect(events[1]!.conversationEvents).toMatchObject({
      kind: 'EDITED',
      pts: sent.pts + 1,
      message: { status: 'NORMAL', content: { data: { status: 'approved' } } },
    })
    const changes = (await member!.run(CardChanges, { id: group.id, sincePts: sent.pts })).conversation!.changes
    expect(changes.messages).toEqual([{ id: sent.id, pts: sent.pts + 1 }])
  })

  it("lets only the card's sender update it (operators for SYSTEM cards), and refuses non-cards and recalled cards", async () => {
    const [agent, member] = await newUsers(2)
    const host = await newUser({ operator: true })
    const group = await createGroup(agent!, [member!])
    const sent = (
      await agent!.run(SendCard, {
        input: { conversationId: group.id, clientMessageId: clientMessageId(), content: { card: approval } },
      })
    ).sendMessage.message
    expect(codes(await member!.try(UpdateCard, { messageId: sent.id, data: { x: 1 } }))).toEqual(['FORBIDDEN'])
    const text = (
      await agent!.run(SendCard, {
        input: { conversationId: group.id, clientMessageId: clientMessageId(), content: { text: { text: 'hi' } } },
      })
    ).sendMessage.message
    expect(codes(await agent!.try(UpdateCard, { messageId: text.id, data: { x: 1 } }))).toEqual(['NOT_EDITABLE'])
    expect(
      codes(
        await agent!.try(UpdateCard, {
          messageId: sent.id,
          data: { x: 1 },
          actions: [...approval.actions, ...approval.actions],
        }),
      ),
    ).toEqual(['BAD_USER_INPUT'])

    const systemCard = (
      await host.run(PostSystem, {
        input: { conversationId: group.id, clientMessageId: clientMessageId(), content: { card: approval } },
      })
    ).postSystemMessage.message
    expect(codes(await agent!.try(UpdateCard, { messageId: systemCard.id, data: { x: 1 } }))).toEqual(['FORBIDDEN'])
    const byHost = (await host.run(UpdateCard, { messageId: systemCard.id, data: { status: 'done' } })).updateCard
    // Actions not given: kept.
    expect(byHost.content).toMatchObject({
      data: { status: 'done' },
      actions: [{ id: 'approve' }, { id: 'reject' }, { id: 'open' }],
    })

    await agent!.run(RecallMessage, { messageId: sent.id })
    expect(codes(await agent!.try(UpdateCard, { messageId: sent.id, data: { x: 1 } }))).toEqual(['MESSAGE_RECALLED'])
    expect(codes(await member!.try(PressCardAction, { messageId: sent.id, actionId: 'approve' }))).toEqual([
      'MESSAGE_RECALLED',
    ])
  })

  it('records one choice per user per card: the same again is a no-op, another replaces it', async () => {
    const [agent, member, other, outsider] = await newUsers(4)
    const group = await createGroup(agent!, [member!, other!])
    const sent = (
      await agent!.run(SendCard, {
        input: { conversationId: group.id, clientMessageId: clientMessageId(), content: { card: approval } },
      })
    ).sendMessage.message
    const pressed = (
      await member!.run(PressCardAction, { messageId: sent.id, actionId: 'approve', value: { note: 'ok' } })
    ).pressCardAction
    expect(pressed.content).toMatchObject({ viewerActionId: 'approve' })
    expect(pressed.pts).toBe(sent.pts)
    await member!.run(PressCardAction, { messageId: sent.id, actionId: 'approve' })
    expect(
      (await member!.run(PressCardAction, { messageId: sent.id, actionId: 'reject' })).pressCardAction.content,
    ).toMatchObject({
      viewerActionId: 'reject',
    })
    expect((await other!.run(ReadCard, { id: sent.id })).node!.content).toMatchObject({ viewerActionId: null })
    expect((await member!.run(ReadCard, { id: sent.id })).node!.content).toMatchObject({ viewerActionId: 'reject' })
    expect(codes(await member!.try(PressCardAction, { messageId: sent.id, actionId: 'nope' }))).toEqual([
      'BAD_USER_INPUT',
    ])
    expect(codes(await member!.try(PressCardAction, { messageId: sent.id, actionId: 'open' }))).toEqual([
      'BAD_USER_INPUT',
    ])
    expect(codes(await outsider!.try(PressCardAction, { messageId: sent.id, actionId: 'approve' }))).toEqual([
      'NOT_FOUND',
    ])
  })
})
