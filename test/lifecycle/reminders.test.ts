import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import { describe, expect, inject, it } from 'vitest'
import { createDb } from '../../src/db/client.ts'
import type { Parley } from '../../src/app.ts'
import { createApp } from '../../src/app.ts'
import { fireDueReminders, startReminderScheduler } from '../../src/domain/lifecycle/reminders.ts'
import { DEFAULT_SETTINGS } from '../../src/domain/core/settings.ts'
import { userTopic, type RealtimeEvent } from '../../src/realtime/events.ts'
import { createRealtime } from '../../src/realtime/pubsub.ts'
import { newUsers, testApp, type TestUser } from '../support/harness.ts'
import { DeleteForMe, listen, messageKey, RecallMessage, SetReminder, userKey } from '../support/lifecycle.ts'
import { InboxEvents } from '../support/live.ts'
import { createGroup, sendText } from '../support/operations.ts'
import { liveServer, subscribeWs, waitForSubscriptions, type Received } from '../support/server.ts'

/** A second server instance on the same database: its own connection pool and event bus. */
async function withSecondInstance(work: (second: Parley) => Promise<void>) {
  const second = createApp({
    db: createDb(inject('databaseUrl'), { poolSize: 5 }),
    realtime: createRealtime(),
    settings: structuredClone(DEFAULT_SETTINGS),
  })
  try {
    await work(second)
  } finally {
    await second.db.$disconnect()
  }
}

/** The reminderDue events both instances publish to `users`. */
async function listenToBoth(apps: Parley[], users: TestUser[]) {
  const listeners = await Promise.all(
    apps.flatMap((app) => users.map((u) => listen(app.realtime, userTopic(userKey(u.id))))),
  )
  return {
    async fired() {
      const all = (await Promise.all(listeners.map((l) => l.seen()))).flat()
      return all
        .filter((e): e is Extract<RealtimeEvent, { type: 'reminderDue' }> => e.type === 'reminderDue')
        .map((e) => `${e.userId}:${e.conversationId}:${e.seq}`)
    },
    /** Resolves once either instance published a reminderDue. */
    anyFired: () =>
      Promise.race(listeners.map((l) => l.until((events) => events.some((e) => e.type === 'reminderDue')))),
    stop: () => Promise.all(listeners.map((l) => l.stop())),
  }
}

const past = () => new Date(Date.now() - 1000).toISOString()
const reminderOf = (user: TestUser, messageId: string) => {
  const key = messageKey(messageId)
  return `${userKey(user.id)}:${key.conversationId}:${key.seq}`
}

describe('the reminder scheduler', () => {
  it('fires each due reminder exactly once with two instances claiming concurrently, and none it should not', async () => {
    const [bob, ...readers] = await newUsers(4)
    const group = await createGroup(bob!, readers)
    const messages = []
    for (let i = 0; i < 12; i++) messages.push((await sendText(bob!, group.id, `m${i}`)).message)
    const [recalled, deleted, future, ...due] = messages
    const expected: string[] = []
    for (const reader of readers) {
      for (const m of due) {
        await reader.run(SetReminder, { messageId: m.id, remindAt: past() })
        expected.push(reminderOf(reader, m.id))
      }
    }
    const alice = readers[0]!
    await alice.run(SetReminder, { messageId: recalled!.id, remindAt: past() })
    await alice.run(SetReminder, { messageId: deleted!.id, remindAt: past() })
    await alice.run(SetReminder, { messageId: future!.id, remindAt: new Date(Date.now() + 3_600_000).toISOString() })
    await bob!.run(RecallMessage, { messageId: recalled!.id })
    await alice.run(DeleteForMe, { ids: [deleted!.id] })

    await withSecondInstance(async (second) => {
      const apps = [testApp().app, second]
      const events = await listenToBoth(apps, readers)
      try {
        // Small batches, so the two instances interleave their claims many times.
        await Promise.all(
          apps.map(async (app) => {
            while ((await fireDueReminders(app, 3)) > 0);
          }),
        )
        const fired = await events.fired()
        expect(fired.sort()).toEqual(expected.sort())

        // Setting a reminder again re-arms it: it fires once more, once.
        await alice.run(SetReminder, { messageId: due[0]!.id, remindAt: past() })
        await Promise.all(apps.map((app) => fireDueReminders(app)))
        expect((await events.fired()).filter((r) => r === reminderOf(alice, due[0]!.id))).toHaveLength(2)
      } finally {
        await events.stop()
      }
    })
  })

  it('runs as a loop on each instance and still fires once; stop() ends it', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    const m = (await sendText(alice!, group.id, 'remind me')).message
    await withSecondInstance(async (second) => {
      const apps = [testApp().app, second]
      const events = await listenToBoth(apps, [bob!])
      const schedulers = apps.map((app) => startReminderScheduler(app, { intervalMs: 10 }))
      try {
        await bob!.run(SetReminder, { messageId: m.id, remindAt: new Date().toISOString() })
        await events.anyFired()
      } finally {
        await Promise.all(schedulers.map((s) => s.stop()))
      }
      await Promise.all(apps.map((app) => fireDueReminders(app)))
      expect(await events.fired()).toEqual([reminderOf(bob!, m.id)])
      await events.stop()
    })
  })
})

describe('a scheduler that dies mid-way (at least once, delivered once)', () => {
  const live = liveServer()
  const inbox = (user: TestUser) =>
    subscribeWs(live.connect(user.token), InboxEvents) as Received<{
      inboxEvents: { __typename: string; message?: { id: string } }
    }>
  const remindersIn = (events: { inboxEvents: { __typename: string; message?: { id: string } } }[]) =>
    events.filter((e) => e.inboxEvents.__typename === 'ReminderDueEvent').map((e) => e.inboxEvents.message!.id)
  const LEASE_MS = 1_000

  it('killed after claiming, before publishing: the reminder fires once its lease expires', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    const m = (await sendText(alice!, group.id, 'remind me')).message
    const events = inbox(bob!)
    await waitForSubscriptions(live.server.app, bob!, 1)
    await bob!.run(SetReminder, { messageId: m.id, remindAt: past() })

    const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/reminder-crash.ts'], {
      cwd: fileURLToPath(new URL('../..', import.meta.url)),
      env: { ...process.env, DATABASE_URL: inject('databaseUrl'), LEASE_MS: String(LEASE_MS) },
      stdio: 'ignore',
    })
    const [code, signal] = await once(child, 'exit')
    expect([code, signal]).toEqual([null, 'SIGKILL'])
    // The claim outlived its process: no one fires it while the lease holds…
    const claimedAt = Date.now()
    while (Date.now() - claimedAt < LEASE_MS / 2) await fireDueReminders(testApp().app, 1000, LEASE_MS)
    expect(remindersIn(events.events)).toEqual([])
    // …and the next pass after it fires it.
    await new Promise((resolve) => setTimeout(resolve, LEASE_MS))
    while ((await fireDueReminders(testApp().app, 1000, LEASE_MS)) > 0);
    expect(remindersIn(await events.waitUntil((e) => remindersIn(e).length > 0))).toEqual([m.id])
    events.dispose()
  })

  it('dead after publishing, before marking fired: fired again after the lease, a subscriber sees it once', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    const [m, after] = [
      (await sendText(alice!, group.id, 'remind me')).message,
      (await sendText(alice!, group.id, 'then me')).message,
    ]
    const events = inbox(bob!)
    await waitForSubscriptions(live.server.app, bob!, 1)
    const bus = listen(testApp().app.realtime, userTopic(userKey(bob!.id)))
    await bob!.run(SetReminder, { messageId: m.id, remindAt: past() })
    // Publishes for real, then hangs as a process that died there would: it never marks anything fired.
    const app = testApp().app
    const dying = {
      ...app,
      realtime: {
        ...app.realtime,
        publish: (e: readonly RealtimeEvent[]) => (void app.realtime.publish(e), new Promise<boolean>(() => {})),
      },
    }
    void fireDueReminders(dying, 1000, LEASE_MS)
    await events.waitUntil((e) => remindersIn(e).length > 0)

    await new Promise((resolve) => setTimeout(resolve, LEASE_MS * 1.5))
    while ((await fireDueReminders(app, 1000, LEASE_MS)) > 0);
    // A later reminder shows the stream has moved past any repeat of the first.
    await bob!.run(SetReminder, { messageId: after.id, remindAt: past() })
    while ((await fireDueReminders(app, 1000, LEASE_MS)) > 0);
    expect(remindersIn(await events.waitUntil((e) => remindersIn(e).length >= 2))).toEqual([m.id, after.id])
    const published = (await (await bus).seen()).filter(
      (e) => e.type === 'reminderDue' && e.seq === messageKey(m.id).seq,
    )
    expect(published).toHaveLength(2)
    await (await bus).stop()
    events.dispose()
  })
})
