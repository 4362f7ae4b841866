// npm run seed: demo users and conversations (idempotent). Uses DATABASE_URL, else the embedded database.
import { loadConfig, reportFailure } from '../src/config/env.ts'
import { createDb } from '../src/db/client.ts'
import { openDatabase } from '../src/db/embedded.ts'
import { seedDemo } from '../src/ops/demo.ts'
import { createApp, settingsFromConfig } from '../src/app.ts'
import { createRealtime } from '../src/realtime/pubsub.ts'

try {
  const config = loadConfig()
  const database = await openDatabase(config)
  try {
    const db = createDb(database.url)
    await seedDemo(createApp({ db, realtime: createRealtime(), settings: settingsFromConfig(config) }))
    await db.$disconnect()
    console.log('demo data ready: users alice, bob, carol, helper-bot (mint a token with `npm run token -- alice`)')
  } finally {
    await database.stop()
  }
} catch (error) {
  reportFailure('cannot seed', error)
  process.exit(1)
}
