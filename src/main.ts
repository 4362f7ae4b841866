import path from 'node:path'
import { resolveAuthSecret, signToken } from './auth.ts'
import { loadConfig } from './config.ts'
import { createDb } from './db/client.ts'
import { openDatabase } from './db/embedded.ts'
import { seedDemo } from './demo.ts'
import { startReminderScheduler } from './domain/reminders.ts'
import { loadSensitiveWords } from './domain/sendRules.ts'
import { settingsFromConfig } from './domain/settings.ts'
import { createRealtime } from './realtime/pubsub.ts'
import { createRedisRealtime } from './realtime/redis.ts'
import { createParleyServer } from './server.ts'
import { findUserByHandle } from './store/users.ts'

const config = loadConfig()
const log = (message: string) => console.log(`[parley] ${message}`)

const database = await openDatabase(config)
log(database.embedded ? `embedded PostgreSQL in ${path.join(config.DATA_DIR, 'pg')} on port ${config.EMBEDDED_PG_PORT}` : 'using DATABASE_URL')

const db = createDb(database.url, { poolSize: config.DATABASE_POOL_SIZE })
// Several instances share events through Redis; a single one keeps them in process.
const realtime = config.REDIS_URL ? createRedisRealtime(config.REDIS_URL) : createRealtime()
log(config.REDIS_URL ? 'realtime events through Redis' : 'realtime events in process (set REDIS_URL for several instances)')
const app = { db, realtime, settings: settingsFromConfig(config, loadSensitiveWords(config.SENSITIVE_WORDS_FILE)) }
const authSecret = resolveAuthSecret(config, log)

// A first embedded start gets demo data, so GraphiQL shows something real right away.
if (database.embedded && !(await findUserByHandle(db, 'alice'))) {
  await seedDemo(app)
  log('created demo users alice, bob, carol and helper-bot with a few conversations')
}

const server = createParleyServer({ app, authSecret, maxBodyBytes: config.MAX_BODY_BYTES, production: config.NODE_ENV === 'production' })
const url = await server.listen(config.PORT, config.HOST)
log(`GraphQL (GraphiQL in a browser, WebSocket on the same path): ${url}`)
if (config.NODE_ENV !== 'production') log(`a token for alice: ${await signToken(authSecret, 'alice')}`)
const reminders = startReminderScheduler(app, { log })

let stopping = false
async function shutdown(signal: string) {
  if (stopping) return
  stopping = true
  log(`${signal}: draining connections`)
  await server.close()
  await reminders.stop()
  await realtime.close()
  await db.$disconnect()
  await database.stop()
  log('stopped')
  process.exit(0)
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => void shutdown(signal))
