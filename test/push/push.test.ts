import type { Client } from 'graphql-ws'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { parseId } from '../../src/domain/core/ids.ts'
import { startPushWorker, type PushWorker } from '../../src/domain/push/index.ts'
import { createRealtime } from '../../src/realtime/pubsub.ts'
import { sendThenCrash } from '../support/crash.ts'
import { startGorush, type GorushNotification } from '../support/gorush.ts'
import { newUser, newUsers, testApp, type TestUser } from '../support/harness.ts'
import { RecallMessage } from '../support/lifecycle.ts'
import { Append, Finish, StartStream } from '../support/agents.ts'
import { AddMembers, createGroup, MuteMember, OpenPrivate, SendMessage } from '../support/operations.ts'
import { eventually } from '../support/webhooks.ts'
import { RegisterPushDevice, ViewerPushDevices, apnsToken } from '../support/push.ts'
import { AlertEvents, UpdateSettings } from '../support/settings.ts'
import { post, startInstance, subscribeWs, waitForSubscriptions, wsClient, type TestServer } from '../support/server.ts'
import { graphql } from '../gql/index.ts'

/** Push through a Gorush-speaking receiver on loopback, from an instance with PUSH_GATEWAY_URL set. */

const gorush = await startGorush()
let server: TestServer
let worker: PushWorker | null = null
const clients: Client[] = []
beforeAll(async () => {
  server = await startInstance(createRealtime(), {
    settings: { push: { gatewayUrl: gorush.url, preview: 'full' }, presenceDebounceMs: 50 },
  })
  server.app.settings.webhooks.retryScheduleMs = [100, 200, 400]
})
// A test that fails midway leaves no worker running into the next.
afterEach(() => stopWorker())
afterAll(async () => {
  await Promise.all(clients.map((c) => Promise.resolve(c.dispose())))
  await server.close()
})

function connect(user: TestUser): Client {
  const client = wsClient(server.wsUrl, user.token)
  clients.push(client)
  return client
}

function startWorker() {
  if (worker) throw new Error('a push worker is already running')
  worker = startPushWorker(server.app, { pollMs: 20 })
}
async function stopWorker() {
  await worker?.stop()
  worker = null
}

const UnreadTotal = graphql(`
  query PushUnreadTotal {
    viewer {
      unreadTotal
    }
  }
`)

/** Each user's one APNs device; `tokens` tells a notification's recipient. */
const owners = new Map<string, TestUser>()
async function withDevice(user: TestUser): Promise<string> {
  const token = apnsToken()
  await user.run(RegisterPushDevice, { platform: 'APNS', token })
  owners.set(token, user)
  return token
}
const recipientsOf = (notifications: GorushNotification[], messageId: string) =>
  notifications.filter((n) => n.data.messageId === messageId).flatMap((n) => n.tokens.map((t) => owners.get(t)!.handle))

type AlertEvent = { __typename: string; alert: boolean; message: { id: string } }
const messageEvents = (events: { conversationEvents: { __typename: string } }[]) =>
  events.map((e) => e.conversationEvents).filter((e): e is AlertEvent => e.__typename === 'MessageEvent')

async function send(user: TestUser, conversationId: string, text: string, extra: Record<string, unknown> = {}) {
  const response = await post(server.url, user.token, SendMessage, {
    input: { conversationId, clientMessageId: `push-${Math.random()}`, content: { text: { text } }, ...extra },
  })
  if (response.errors) return { error: response.errors[0]!.extensions?.code }
  return response.data!.sendMessage.message
}

describe('push', () => {
  it('notifies exactly the offline members with devices whom MessageEvent.alert alerts, once each, with their unread total as badge', async () => {
    const [sender, plain, dnd, mentioned, target, online, late, muted] = await newUsers(8)
    const members = [plain!, dnd!, mentioned!, target!, online!, muted!]
    const group = await createGroup(sender!, members, 'JOINED')
    for (const user of [sender!, ...members, late!]) await withDevice(user)
    const future = new Date(Date.now() + 3_600_000).toISOString()
    for (const user of [dnd!, mentioned!])
      await user.run(UpdateSettings, { id: group.id, input: { doNotDisturbUntil: future } })
    await sender!.run(MuteMember, { conversationId: group.id, userId: muted!.id, until: future })
    subscribeWs(connect(online!), AlertEvents, { conversationId: group.id })
    await waitForSubscriptions(server.app, online!, 1)

    // Sent while no worker runs: a member who joins before the job runs stays outside its JOINED window.
    const sent = {
      plain: await send(sender!, group.id, 'hello all'),
      mention: await send(sender!, group.id, 'ping', { mentionUserIds: [mentioned!.id] }),
      all: await send(sender!, group.id, 'everyone', { mentionAll: true }),
      directed: await send(sender!, group.id, 'psst', { visibleToUserIds: [target!.id] }),
      fromMuted: await send(muted!, group.id, 'silenced'),
    }
    expect(sent.fromMuted).toEqual({ error: 'SENDER_MUTED' })
    await sender!.run(AddMembers, { conversationId: group.id, userIds: [late!.id] })
    startWorker()
    const ids = [sent.plain, sent.mention, sent.all, sent.directed].map((m) => (m as { id: string }).id)
    const expectedCount = 4 + 2 + 5 + 1
    const ours = (all: GorushNotification[]) => all.filter((n) => ids.includes(n.data.messageId))
    const notifications = ours(await gorush.until((a) => ours(a).length >= expectedCount, 'the notifications'))
    expect(await gorush.quietFor(300)).toEqual([])

    const h = (...users: TestUser[]) => users.map((u) => u.handle).sort()
    expect(recipientsOf(notifications, ids[0]!).sort()).toEqual(h(plain!, target!, muted!))
    expect(recipientsOf(notifications, ids[1]!).sort()).toEqual(h(plain!, mentioned!, target!, muted!))
    expect(recipientsOf(notifications, ids[2]!).sort()).toEqual(h(plain!, dnd!, mentioned!, target!, muted!))
    expect(recipientsOf(notifications, ids[3]!).sort()).toEqual(h(target!))

    // The same rule as MessageEvent.alert: each offline member's replayed alerts name the messages pushed to them.
    for (const member of [sender!, plain!, dnd!, mentioned!, target!, muted!]) {
      const replay = subscribeWs(connect(member), AlertEvents, { conversationId: group.id, sincePts: group.lastPts })
      // Every one of them sees the @all message; the directed one comes after it.
      await replay.waitUntil((e) => messageEvents(e).some((x) => x.message.id === ids[2]))
      await new Promise((resolve) => setTimeout(resolve, 100))
      const alerted = messageEvents(replay.events)
        .filter((e) => e.alert)
        .map((e) => e.message.id)
      const pushed = notifications.filter((n) => owners.get(n.tokens[0]!) === member).map((n) => n.data.messageId)
      expect(pushed.sort(), member.handle).toEqual(alerted.sort())
      replay.dispose()
    }
    // Outside the window: neither replayed nor pushed.
    const lateReplay = subscribeWs(connect(late!), AlertEvents, { conversationId: group.id, sincePts: group.lastPts })
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(messageEvents(lateReplay.events).filter((e) => ids.includes(e.message.id))).toEqual([])
    expect(recipientsOf(notifications, ids[2]!)).not.toContain(late!.handle)
    lateReplay.dispose()

    // Badges: each recipient's unread total when its job ran (nothing was read since).
    for (const member of [plain!, target!]) {
      const total = (await member.run(UnreadTotal)).viewer.unreadTotal
      const last = notifications.filter((n) => owners.get(n.tokens[0]!) === member).map((n) => n.badge)
      expect(Math.max(...last), member.handle).toBe(total)
    }
    expect(notifications.find((n) => n.data.messageId === ids[0])).toMatchObject({
      platform: 1,
      title: expect.stringContaining('test group'),
      message: 'hello all',
      data: { conversationId: group.id, messageId: ids[0], seq: String((sent.plain as { seq: number }).seq) },
    })
    await stopWorker()
  })
})

describe('push: the gateway', () => {
  it('removes devices whose token the gateway reports unregistered, and keeps the others', async () => {
    const [sender, reader] = await newUsers(2)
    const group = await createGroup(sender!, [reader!])
    const dead = await withDevice(reader!)
    const alive = await withDevice(reader!)
    gorush.invalid.add(dead)
    const sent = (await send(sender!, group.id, 'to two phones')) as { id: string }
    startWorker()
    const [notification] = (
      await gorush.until((a) => a.some((n) => n.data.messageId === sent.id), 'the notification')
    ).filter((n) => n.data.messageId === sent.id)
    // One recipient, one platform: one notification carrying both tokens.
    expect(notification!.tokens.sort()).toEqual([dead, alive].sort())
    const devices = await eventually(
      async () => (await reader!.run(ViewerPushDevices)).viewer.pushDevices,
      (d) => d.length === 1 && d[0]!.lastNotifiedAt !== null,
    )
    expect(devices[0]).toMatchObject({ tokenSuffix: alive.slice(-6), lastNotifiedAt: expect.any(String) })
    await stopWorker()
  })

  it('retries a gateway that answers 503, on the outbox schedule, until it takes the notification', async () => {
    const [sender, reader] = await newUsers(2)
    const group = await createGroup(sender!, [reader!])
    await withDevice(reader!)
    gorush.failing = 2
    const sent = (await send(sender!, group.id, 'eventually')) as { id: string }
    const before = gorush.requests.length
    startWorker()
    await gorush.until((a) => a.some((n) => n.data.messageId === sent.id), 'the notification after two 503s')
    const tries = gorush.requests.slice(before).filter((r) => r.notifications.some((n) => n.data.messageId === sent.id))
    expect(tries.map((r) => r.status)).toEqual([503, 503, 200])
    await stopWorker()
  })

  it('gives up on a gateway that does not answer within 10 s and tries again', async () => {
    const [sender, reader] = await newUsers(2)
    const group = await createGroup(sender!, [reader!])
    await withDevice(reader!)
    gorush.hanging = 1
    const sent = (await send(sender!, group.id, 'after a hang')) as { id: string }
    const before = gorush.requests.length
    const started = Date.now()
    startWorker()
    await gorush.until((a) => a.some((n) => n.data.messageId === sent.id), 'the notification after a hang')
    expect(Date.now() - started).toBeGreaterThanOrEqual(10_000)
    const tries = gorush.requests.slice(before).filter((r) => r.notifications.some((n) => n.data.messageId === sent.id))
    expect(tries.map((r) => r.status)).toEqual([0, 200])
    await stopWorker()
  }, 40_000)

  it('does not push a message recalled before its job ran', async () => {
    const [sender, reader] = await newUsers(2)
    const group = await createGroup(sender!, [reader!])
    await withDevice(reader!)
    const recalled = (await send(sender!, group.id, 'oops')) as { id: string }
    await sender!.run(RecallMessage, { messageId: recalled.id })
    const kept = (await send(sender!, group.id, 'this one')) as { id: string }
    startWorker()
    await gorush.until((a) => a.some((n) => n.data.messageId === kept.id), 'the kept message')
    expect(gorush.accepted().filter((n) => n.data.messageId === recalled.id)).toEqual([])
    await stopWorker()
  })

  it('pushes a streamed reply once, when its stream ends, with its final text', async () => {
    const [agent, reader] = await newUsers(2)
    const group = await createGroup(agent!, [reader!])
    await withDevice(reader!)
    // Through the instance with PUSH_GATEWAY_URL: only its transactions record push jobs.
    const started = await post(server.url, agent!.token, StartStream, {
      conversationId: group.id,
      clientMessageId: `push-stream-${Math.random()}`,
    })
    const streamed = started.data!.startStreamingMessage.message.id
    await post(server.url, agent!.token, Append, { messageId: streamed, sequence: 1, delta: 'the answer is 42' })
    startWorker()
    // A message sent after the start is pushed; the stream, still being written, is not.
    const later = (await send(agent!, group.id, 'meanwhile')) as { id: string }
    await gorush.until((a) => a.some((n) => n.data.messageId === later.id), 'the later message')
    expect(gorush.accepted().filter((n) => n.data.messageId === streamed)).toEqual([])

    await post(server.url, agent!.token, Finish, { messageId: streamed })
    const all = await gorush.until((a) => a.some((n) => n.data.messageId === streamed), 'the finished stream')
    expect(all.filter((n) => n.data.messageId === streamed)).toMatchObject([{ message: 'the answer is 42' }])
    await stopWorker()
  })

  it('shows per PUSH_PREVIEW: full (sender and text), sender (the sender only), none (neither)', async () => {
    const [sender, reader] = [await newUser({ name: 'Ada' }), await newUser()]
    const { openPrivateConversation: chat } = await sender.run(OpenPrivate, { userId: reader.id })
    await withDevice(reader)
    startWorker()
    const shown: Record<string, GorushNotification> = {}
    for (const preview of ['full', 'sender', 'none'] as const) {
      server.app.settings.push.preview = preview
      const sent = (await send(sender, chat.id, 'the secret plan')) as { id: string }
      const all = await gorush.until((a) => a.some((n) => n.data.messageId === sent.id), `the ${preview} preview`)
      shown[preview] = all.find((n) => n.data.messageId === sent.id)!
    }
    server.app.settings.push.preview = 'full'
    expect(shown.full).toMatchObject({ title: 'Ada', message: 'the secret plan' })
    expect(shown.sender).toMatchObject({ title: 'Ada', message: 'New message' })
    expect(shown.none!.title).toBeUndefined()
    expect(shown.none!.message).toBe('New message')
    await stopWorker()
  })

  it('loses nothing to a crash between commit and push: the job committed with the send goes out once a worker runs', async () => {
    const [sender, reader] = await newUsers(2)
    const group = await createGroup(sender!, [reader!])
    await withDevice(reader!)
    expect(await sendThenCrash(sender!, group.id, { PUSH_GATEWAY_URL: gorush.url })).toEqual([null, 'SIGKILL'])
    const conversationId = parseId(group.id, 'Conversation')
    const jobs = await testApp().db.$queryRaw<{ seq: bigint }[]>`
      SELECT seq FROM push_jobs WHERE conversation_id = ${conversationId}`
    expect(jobs).toHaveLength(1)
    startWorker()
    const [pushed] = (
      await gorush.until((a) => a.some((n) => n.data.conversationId === group.id), 'the message sent before the crash')
    ).filter((n) => n.data.conversationId === group.id)
    expect(pushed).toMatchObject({ message: 'sent just before the crash', data: { seq: String(jobs[0]!.seq) } })
    await stopWorker()
  })
})
