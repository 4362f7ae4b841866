import { describe, expect, it } from 'vitest'
import { codes, newUser, newUsers } from '../support/harness.ts'
import { liveServer, subscribeWs, waitForSubscriptions } from '../support/server.ts'
import { createGroup } from '../support/operations.ts'
import { AgentEvents, PostSystem, Unread } from '../support/agents.ts'

const instance = liveServer()
let counter = 0
const clientMessageId = () => `system-${process.pid}-${++counter}`

describe('postSystemMessage', () => {
  it("posts a host's text as SYSTEM (no sender), live with an alert, unread, idempotent by clientMessageId", async () => {
    const [owner, member] = await newUsers(2)
    const host = await newUser({ operator: true })
    const group = await createGroup(owner!, [member!])
    const stream = subscribeWs(instance.connect(member!.token), AgentEvents, { conversationId: group.id })
    await waitForSubscriptions(instance.server.app, member!, 1)
    const before = (await member!.run(Unread, { id: group.id })).conversation!.unreadCount
    const input = {
      conversationId: group.id,
      clientMessageId: clientMessageId(),
      content: { text: { text: 'Leave approved' } },
    }
    const posted = (await host.run(PostSystem, { input })).postSystemMessage
    expect(posted).toMatchObject({
      deduplicated: false,
      message: { kind: 'TEXT', senderType: 'SYSTEM', sender: null, content: { text: 'Leave approved' } },
    })
    const again = (await host.run(PostSystem, { input })).postSystemMessage
    expect(again).toMatchObject({ deduplicated: true, message: { id: posted.message.id } })
    const [event] = await stream.waitFor(1)
    expect(event!.conversationEvents).toMatchObject({
      __typename: 'MessageEvent',
      kind: 'ADDED',
      alert: true,
      message: { id: posted.message.id, senderType: 'SYSTEM', content: { text: 'Leave approved' } },
    })
    expect((await member!.run(Unread, { id: group.id })).conversation!.unreadCount).toBe(before + 1)
  })

  it('posts a call event as a SYSTEM message with actor and targets, which neither alerts nor counts as unread', async () => {
    const [owner, member] = await newUsers(2)
    const host = await newUser({ operator: true })
    const group = await createGroup(owner!, [member!])
    const stream = subscribeWs(instance.connect(member!.token), AgentEvents, { conversationId: group.id })
    await waitForSubscriptions(instance.server.app, member!, 1)
    const before = (await member!.run(Unread, { id: group.id })).conversation!.unreadCount
    const posted = (
      await host.run(PostSystem, {
        input: {
          conversationId: group.id,
          clientMessageId: clientMessageId(),
          content: { text: { text: 'call started' } },
          event: 'CALL_STARTED',
          actorId: owner!.id,
          targetIds: [member!.id],
        },
      })
    ).postSystemMessage
    expect(posted.message).toMatchObject({
      kind: 'SYSTEM',
      senderType: 'SYSTEM',
      content: {
        __typename: 'SystemContent',
        event: 'CALL_STARTED',
        actor: { id: owner!.id },
        targets: [{ id: member!.id }],
      },
    })
    const [event] = await stream.waitFor(1)
    expect(event!.conversationEvents).toMatchObject({ kind: 'ADDED', alert: false })
    expect((await member!.run(Unread, { id: group.id })).conversation!.unreadCount).toBe(before)
  })

  it('refuses non-operators (FORBIDDEN), events a host may not post, and missing conversations', async () => {
    const [owner] = await newUsers(1)
    const host = await newUser({ operator: true })
    const group = await createGroup(owner!, [])
    const input = { conversationId: group.id, clientMessageId: clientMessageId(), content: { text: { text: 'hi' } } }
    expect(codes(await owner!.try(PostSystem, { input }))).toEqual(['FORBIDDEN'])
    expect(codes(await host.try(PostSystem, { input: { ...input, event: 'MEMBERS_ADDED' } }))).toEqual([
      'BAD_USER_INPUT',
    ])
    const missing = Buffer.from('Conversation:999999999').toString('base64url')
    expect(codes(await host.try(PostSystem, { input: { ...input, conversationId: missing } }))).toEqual(['NOT_FOUND'])
  })
})
