import { describe, expect, it } from 'vitest'
import { parseId } from '../../src/domain/core/ids.ts'
import { newUsers, type TestUser } from '../support/harness.ts'
import { Position } from '../support/live.ts'
import { createGroup, sendText } from '../support/operations.ts'
import { liveServer, subscribeWs, waitForSubscriptions } from '../support/server.ts'
import { FollowThread, reply } from '../support/threads.ts'
import { ThreadEvents } from '../support/threadStreams.ts'

const instance = liveServer()

const lastPtsOf = async (user: TestUser, id: string) => (await user.run(Position, { id })).conversation!.lastPts

async function follow(user: TestUser, conversationId: string, sincePts?: number) {
  const open = instance.server.app.hub.stats(parseId(user.id, 'User')).subscriptions
  const stream = subscribeWs(instance.connect(user.token), ThreadEvents, {
    conversationId,
    sincePts: sincePts ?? (await lastPtsOf(user, conversationId)),
  })
  await waitForSubscriptions(instance.server.app, user, open + 1)
  return stream
}

type Event = { conversationEvents: { __typename: string; alert?: boolean; message?: { seq: number } } }
const alertsOf = (events: Event[]) => events.map((e) => [e.conversationEvents.message!.seq, e.conversationEvents.alert])

describe('thread replies live', () => {
  it('arrive on the conversation stream with their root; alerts go to followers and the mentioned, live and replayed', async () => {
    const [alice, bob, carol, dave] = await newUsers(4)
    const group = await createGroup(alice!, [bob!, carol!, dave!])
    const root = (await sendText(alice!, group.id, 'question')).message
    const start = await lastPtsOf(alice!, group.id)
    const streams = await Promise.all([alice!, carol!, dave!].map((u) => follow(u, group.id)))
    const quiet = await reply(bob!, group.id, root.id, { mentions: [dave!.id] })
    await dave!.run(FollowThread, { messageId: root.id, follow: false })
    const loud = await reply(bob!, group.id, root.id, { also: true })
    const [forAlice, forCarol, forDave] = await Promise.all(streams.map((s) => s.waitFor(2)))
    expect(alertsOf(forAlice!)).toEqual([
      [quiet.seq, true],
      [loud.seq, true],
    ])
    expect(alertsOf(forCarol!)).toEqual([
      [quiet.seq, false],
      [loud.seq, true],
    ])
    expect(alertsOf(forDave!)).toEqual([
      [quiet.seq, true], // mentioned
      [loud.seq, true], // sent alsoInConversation
    ])
    // The reply carries its root, whose summary a client's cache updates in place.
    expect(forCarol![0]!.conversationEvents).toMatchObject({
      message: { inConversation: false, threadRoot: { id: root.id, thread: { replyCount: 1 } } },
    })
    expect(forCarol![1]!.conversationEvents).toMatchObject({ message: { threadRoot: { thread: { replyCount: 2 } } } })
    for (const s of streams) s.dispose()
    for (const u of [alice!, carol!, dave!]) await waitForSubscriptions(instance.server.app, u, 0)
    // A resume replays them with the same alerts.
    const replayed = await Promise.all([alice!, carol!].map((u) => follow(u, group.id, start)))
    const [againAlice, againCarol] = await Promise.all(replayed.map((s) => s.waitFor(2)))
    expect(alertsOf(againAlice!)).toEqual(alertsOf(forAlice!))
    expect(alertsOf(againCarol!)).toEqual(alertsOf(forCarol!))
    for (const s of replayed) s.dispose()
  })
})
