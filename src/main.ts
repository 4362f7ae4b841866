import cluster from 'node:cluster'
import path from 'node:path'
import { resolveAuthSecret } from './http/auth/hs256.ts'
import { loadConfig, reportFailure, StartupError } from './config/env.ts'
import { openDatabase } from './db/embedded.ts'
import { createLogger } from './ops/logger.ts'
import { isPortFree } from './lib/ports.ts'
import { runWorkers } from './ops/workers.ts'

// JSON lines (pino); the level is set from LOG_LEVEL once the environment is validated.
const logger = createLogger('info')
const log = (message: string) => logger.info(message)

/** What start-up has opened, closed in reverse if a later step fails (an embedded database is not left running). */
const opened: (() => Promise<unknown>)[] = []

async function start() {
  const config = loadConfig()
  logger.level = config.LOG_LEVEL
  const authSecret = resolveAuthSecret(config, log)
  // Before a database is started for nothing; a port taken meanwhile is still reported by listen().
  if (config.PORT !== 0 && !(await isPortFree(config.PORT, config.HOST))) throw portInUse(config.PORT, config.HOST)
  // The server's modules (schema, Prisma client, Yoga) take seconds to load: after the checks above,
  // so a mistake is reported at once, and while the database starts. A primary of workers serves nothing.
  const server = config.WORKERS > 1 ? null : import('./serve.ts')
  const database = await openDatabase(config, log)
  opened.push(() => database.stop())
  log(
    database.embedded
      ? `embedded PostgreSQL in ${path.join(config.DATA_DIR, 'pg')} on port ${new URL(database.url).port}`
      : 'using DATABASE_URL',
  )
  if (!server) {
    // The secret resolved here (a development one may have just been generated) is every worker's.
    const env = {
      DATABASE_URL: database.url,
      ...(authSecret ? { AUTH_SECRET: authSecret } : {}),
      PARLEY_EMBEDDED: database.embedded ? '1' : '',
    }
    const relay = !config.REDIS_URL
    const code = await runWorkers({ count: config.WORKERS, env, relay, shutdownGraceMs: config.SHUTDOWN_GRACE_MS, log })
    await database.stop()
    log('stopped')
    process.exit(code)
  }
  const { serve } = await server
  await serve({ config, authSecret, database, log, logger, opened: (close) => opened.push(close) }).catch(
    (error: NodeJS.ErrnoException) => {
      throw listenError(error, config.PORT, config.HOST)
    },
  )
}

const portInUse = (port: number, host: string) =>
  new StartupError(
    `port ${port} on ${host} is already in use: stop the program listening there or set PORT to a free port`,
  )

/** Node's listen errors, said as what to set; anything else passes unchanged. */
function listenError(error: NodeJS.ErrnoException, port: number, host: string): Error {
  if (error.syscall !== 'listen') return error
  if (error.code === 'EADDRINUSE') return portInUse(port, host)
  if (error.code === 'EACCES')
    return new StartupError(`no permission to listen on port ${port}: set PORT to 1024 or above`)
  if (error.code === 'EADDRNOTAVAIL')
    return new StartupError(`${host} is not an address of this machine: set HOST (0.0.0.0 listens on all)`)
  return error
}

/** A worker of WORKERS > 1: the primary has checked the configuration and opened and migrated the database. */
async function startWorker() {
  const config = loadConfig()
  logger.level = config.LOG_LEVEL
  const database = { url: config.DATABASE_URL!, stop: async () => {}, embedded: process.env.PARLEY_EMBEDDED === '1' }
  const { serve } = await import('./serve.ts')
  const authSecret = config.AUTH_SECRET ?? null
  await serve({ config, authSecret, database, log, logger, opened: (close) => opened.push(close) })
}

try {
  await (cluster.isWorker ? startWorker() : start())
} catch (error) {
  reportFailure('cannot start', error)
  for (const close of opened.reverse()) await close().catch(() => {})
  process.exit(1)
}
