import type { Client } from 'graphql-ws'
import { describe, expect, it } from 'vitest'
import { newUsers, type TestUser } from '../support/harness.ts'
import {
  post,
  sendVia,
  spawnInstance,
  subscribeWs,
  testRedisUrl,
  twoInstances,
  waitForSubscriptions,
  type Received,
  type TestServer,
  type wsClient,
} from '../support/server.ts'
import { ConversationEvents, InboxEvents, SendTyping } from '../support/live.ts'
import { createGroup } from '../support/operations.ts'
import { SaveDraft, SettingsEvents } from '../support/settings.ts'

/**
 * Two instances on one database. With TEST_REDIS_URL (CI sets it when Redis answers) their events
 * cross through Redis; without it through one shared in-process event target.
 */
const instances = twoInstances()

function connect(
  server: TestServer | (() => string),
  user: TestUser,
  opts: Parameters<typeof wsClient>[2] = {},
): Client {
  return instances.connect(server, user.token, opts)
}

type MessageEvents = { conversationEvents: { __typename: string; pts?: number; message?: { id: string } } }[]
const ids = (events: MessageEvents) => events.map((e) => e.conversationEvents.message?.id)

function follow(client: Client, conversationId: string, sincePts?: number): Received<MessageEvents[number]> {
  return subscribeWs(client, ConversationEvents, { conversationId, sincePts })
}

describe(`several instances (events through ${testRedisUrl ? 'Redis' : 'a shared in-process target'})`, () => {
  it('delivers on A what is sent through B, and resumes on B what was sent through A meanwhile', async () => {
    const [owner, member] = await newUsers(2)
    const group = await createGroup(owner!, [member!])
    const onA = follow(connect(instances.a, member!), group.id, group.lastPts)
    await waitForSubscriptions(instances.a.app, member!, 1)
    const viaB = await sendVia(instances.b, owner!, group.id, 'through B')
    expect(ids(await onA.waitFor(1))).toEqual([viaB.id])
    onA.dispose()

    const missed = [
      await sendVia(instances.a, owner!, group.id, 'through A 1'),
      await sendVia(instances.a, owner!, group.id, 'through A 2'),
    ]
    const onB = follow(connect(instances.b, member!), group.id, viaB.pts)
    await onB.waitFor(2)
    const live = await sendVia(instances.a, owner!, group.id, 'live through A')
    expect(ids(await onB.waitFor(3))).toEqual([...missed.map((m) => m.id), live.id])
    expect(onB.events.map((e) => e.conversationEvents.pts)).toEqual([viaB.pts + 1, viaB.pts + 2, viaB.pts + 3])
    onB.dispose()
  })

  it('delivers inbox and typing events across instances', async () => {
    const [owner, member] = await newUsers(2)
    const group = await createGroup(owner!, [member!])
    const inbox = subscribeWs(connect(instances.a, member!), InboxEvents)
    const conversation = follow(connect(instances.a, member!), group.id)
    await waitForSubscriptions(instances.a.app, member!, 2)
    expect((await post(instances.b.url, owner!.token, SendTyping, { id: group.id })).data).toEqual({ sendTyping: true })
    const sent = await sendVia(instances.b, owner!, group.id, 'to the inbox')
    expect((await inbox.waitFor(2)).map((e) => e.inboxEvents)).toMatchObject([
      { __typename: 'TypingEvent', user: { id: owner!.id } },
      { __typename: 'MessageEvent', message: { id: sent.id } },
    ])
    expect((await conversation.waitFor(2)).map((e) => e.conversationEvents.__typename)).toEqual([
      'TypingEvent',
      'MessageEvent',
    ])
    inbox.dispose()
    conversation.dispose()
  })

  it("carries a settings change made through B to the same user's device on A", async () => {
    const [owner, member] = await newUsers(2)
    const group = await createGroup(owner!, [member!])
    const device = subscribeWs(connect(instances.a, member!), SettingsEvents)
    await waitForSubscriptions(instances.a.app, member!, 1)
    const saved = await post(instances.b.url, member!.token, SaveDraft, {
      id: group.id,
      draft: { text: 'written on B' },
    })
    expect(saved.errors).toBeUndefined()
    expect((await device.waitFor(1))[0]!.inboxEvents).toMatchObject({
      __typename: 'ConversationUpdatedEvent',
      conversation: { id: group.id, viewerSettings: { draft: { text: 'written on B' } } },
    })
    device.dispose()
  })
})

describe('shutdown', () => {
  it('closes sockets on SIGTERM with 1001, the client reconnects elsewhere, and resuming loses nothing committed', async () => {
    const [owner, member] = await newUsers(2)
    const group = await createGroup(owner!, [member!])
    const doomed = await spawnInstance()
    let target = doomed.wsUrl
    const closeCodes: number[] = []
    let connections = 0
    const client = connect(() => target, member!, {
      retryAttempts: 3,
      on: {
        connected: () => void connections++,
        closed: (event) => void closeCodes.push((event as { code: number }).code),
      },
    })
    // Resuming from the group's start: the stream replays whatever it has not seen on each (re)subscribe.
    const stream = follow(client, group.id, group.lastPts)
    const first = await sendVia(instances.b, owner!, group.id, 'before shutdown')
    await stream.waitFor(1)

    // Committed while the instance shuts down: its event may or may not reach the old socket.
    target = instances.b.wsUrl
    const [during] = await Promise.all([
      sendVia(instances.b, owner!, group.id, 'during shutdown'),
      (doomed.child.kill('SIGTERM'), doomed.exited),
    ])
    expect(await doomed.exited).toBe(0)
    expect(closeCodes[0]).toBe(1001)
    await waitForSubscriptions(instances.b.app, member!, 1)
    expect(connections).toBe(2)
    const after = await sendVia(instances.b, owner!, group.id, 'after shutdown')

    // The retried subscription replays from its sincePts; a client applies each pts once (drops any at or below the newest applied).
    await stream.waitUntil((events) => ids(events).includes(after.id))
    const applied: MessageEvents = []
    for (const event of stream.events)
      if (event.conversationEvents.pts! > (applied.at(-1)?.conversationEvents.pts ?? 0)) applied.push(event)
    expect(ids(applied)).toEqual([first.id, during.id, after.id])
    expect(stream.errors).toEqual([])
    stream.dispose()
  })
})
