import { describe, expect, inject, it } from 'vitest'
import { createDb } from '../src/db/client.ts'
import { createApp, type App } from '../src/domain/app.ts'
import { fireDueReminders, startReminderScheduler } from '../src/domain/reminders.ts'
import { DEFAULT_SETTINGS } from '../src/domain/settings.ts'
import { userTopic, type RealtimeEvent } from '../src/realtime/events.ts'
import { createRealtime } from '../src/realtime/pubsub.ts'
import { newUsers, testApp, type TestUser } from './support/harness.ts'
import { DeleteForMe, listen, messageKey, RecallMessage, SetReminder, userKey } from './support/lifecycle.ts'
import { createGroup, sendText } from './support/operations.ts'

/** A second server instance on the same database: its own connection pool and event bus. */
async function withSecondInstance(work: (second: App) => Promise<void>) {
  const second = createApp({ db: createDb(inject('databaseUrl'), { poolSize: 5 }), realtime: createRealtime(), settings: structuredClone(DEFAULT_SETTINGS) })
  try {
    await work(second)
  } finally {
    await second.db.$disconnect()
  }
}

/** The reminderDue events both instances publish to `users`. */
async function listenToBoth(apps: App[], users: TestUser[]) {
  const listeners = await Promise.all(apps.flatMap((app) => users.map((u) => listen(app.realtime, userTopic(userKey(u.id))))))
  return {
    async fired() {
      const all = (await Promise.all(listeners.map((l) => l.seen()))).flat()
      return all.filter((e): e is Extract<RealtimeEvent, { type: 'reminderDue' }> => e.type === 'reminderDue').map((e) => `${e.userId}:${e.conversationId}:${e.seq}`)
    },
    /** Resolves once either instance published a reminderDue. */
    anyFired: () => Promise.race(listeners.map((l) => l.until((events) => events.some((e) => e.type === 'reminderDue')))),
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
        await Promise.all(apps.map(async (app) => {
          while ((await fireDueReminders(app, 3)) > 0);
        }))
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
