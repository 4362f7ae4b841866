/**
 * A scheduler killed between its two steps: run as its own process (test/lifecycle/reminders.test.ts), it
 * claims the due reminders with a lease of LEASE_MS, and at the moment it would publish their events
 * kills itself with SIGKILL, leaving the claims committed and nothing published or marked fired.
 */
import { createDb } from '../../src/db/client.ts'
import { createApp } from '../../src/app.ts'
import { fireDueReminders } from '../../src/domain/lifecycle/reminders.ts'
import { DEFAULT_SETTINGS } from '../../src/domain/core/settings.ts'
import { createRealtime } from '../../src/realtime/pubsub.ts'

const bus = createRealtime()
const die = async () => {
  process.kill(process.pid, 'SIGKILL')
  return false
}
const app = createApp({
  db: createDb(process.env.DATABASE_URL!, { poolSize: 1 }),
  realtime: { ...bus, publish: die },
  settings: DEFAULT_SETTINGS,
})
await fireDueReminders(app, 1000, Number(process.env.LEASE_MS))
// Reached only when nothing was due.
process.exit(3)
