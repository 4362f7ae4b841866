import { execFile } from 'node:child_process'
import { chownSync, existsSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'
import { embeddedParent } from '../../src/db/embedded.ts'
import { migrateDeploy } from '../../src/db/migrate.ts'
import { withPgClient } from '../../src/db/pg.ts'

const run = promisify(execFile)

/** A PostgreSQL primary and a hot standby streaming from it, each in a folder of its own, for one test file. */
export type ReplicatedPair = {
  primaryUrl: string
  standbyUrl: string
  /** pg_wal_replay_pause() / pg_wal_replay_resume() on the standby. */
  pauseReplay(): Promise<void>
  resumeReplay(): Promise<void>
  stopStandby(): Promise<void>
  startStandby(): Promise<void>
  close(): Promise<void>
}

const PROGRAMS = ['initdb', 'pg_ctl', 'pg_basebackup', 'postgres']

/**
 * The server binaries of the newest PostgreSQL installed the Debian way (/usr/lib/postgresql/<n>/bin),
 * or PG_BINDIR's. The replica tests need them: .ci/run installs Debian's postgresql when missing.
 */
function postgresBinaries(): string {
  const candidates = process.env.PG_BINDIR
    ? [process.env.PG_BINDIR]
    : existsSync('/usr/lib/postgresql')
      ? readdirSync('/usr/lib/postgresql')
          .filter((v) => /^\d+$/.test(v))
          .sort((a, b) => Number(b) - Number(a))
          .map((v) => `/usr/lib/postgresql/${v}/bin`)
      : []
  const found = candidates.find((dir) => PROGRAMS.every((p) => existsSync(path.join(dir, p))))
  if (!found)
    throw new Error(
      `no PostgreSQL server binaries (${PROGRAMS.join(', ')}): install Debian's postgresql (.ci/run does)`,
    )
  return found
}

/** PostgreSQL refuses to run as root: then its programs run as the `postgres` OS user. */
function serverUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('postgres:'))
  if (!line) throw new Error('running as root, but there is no postgres OS user to run PostgreSQL as')
  const [, , uid, gid] = line.split(':')
  return { uid: Number(uid), gid: Number(gid) }
}

/**
 * Starts a throw-away primary (initdb, trust over a socket in its own folder, migrated database
 * `parley`) and a hot standby of it made by `pg_basebackup -R`, both from the machine's PostgreSQL
 * binaries on sockets only (no TCP port to collide with). The machine's own server is not used: its
 * pg_hba.conf need not allow replication connections.
 */
export async function startReplicatedPair(): Promise<ReplicatedPair> {
  const bin = postgresBinaries()
  const user = serverUser()
  const root = embeddedParent('parley-replica-')
  if (user) chownSync(root, user.uid, user.gid)
  const program = (name: string, args: string[]) =>
    run(path.join(bin, name), args, { ...user, cwd: root, env: { ...process.env, LC_ALL: 'C' } })
  const primaryDir = path.join(root, 'primary')
  const standbyDir = path.join(root, 'standby')
  const [primaryPort, standbyPort] = [6101, 6102]
  const options = (port: number) => `-p ${port} -k ${root} -c listen_addresses= -c fsync=off -c max_connections=60`
  const start = (dir: string, port: number) =>
    program('pg_ctl', ['-D', dir, '-l', `${dir}.log`, '-w', '-t', '120', '-o', options(port), 'start'])
  const stop = (dir: string) => program('pg_ctl', ['-D', dir, '-m', 'fast', '-w', 'stop'])
  const url = (port: number) => `postgresql://root@localhost:${port}/parley?host=${root}`
  const standbyAdmin = { host: root, port: standbyPort, user: 'root', database: 'postgres' }
  const primaryAdmin = { ...standbyAdmin, port: primaryPort }
  let standbyRunning = false

  const close = async () => {
    if (standbyRunning) await stop(standbyDir).catch(() => {})
    await stop(primaryDir).catch(() => {})
    rmSync(root, { recursive: true, force: true })
  }
  try {
    await program('initdb', ['-D', primaryDir, '-U', 'root', '--auth=trust', '--encoding=UTF8', '--no-sync'])
    await start(primaryDir, primaryPort)
    await withPgClient(primaryAdmin, (c) => c.query('CREATE DATABASE parley'))
    migrateDeploy(url(primaryPort))
    await program('pg_basebackup', [
      ...['-h', root, '-p', String(primaryPort), '-U', 'root', '-D', standbyDir],
      ...['-R', '-X', 'stream', '-c', 'fast', '--no-sync'],
    ])
    await start(standbyDir, standbyPort)
    standbyRunning = true
  } catch (error) {
    await close()
    throw error
  }
  const onStandby = (sql: string) => withPgClient(standbyAdmin, (c) => c.query(sql))
  return {
    primaryUrl: url(primaryPort),
    standbyUrl: url(standbyPort),
    pauseReplay: async () => void (await onStandby('SELECT pg_wal_replay_pause()')),
    resumeReplay: async () => void (await onStandby('SELECT pg_wal_replay_resume()')),
    async stopStandby() {
      await stop(standbyDir)
      standbyRunning = false
    },
    async startStandby() {
      await start(standbyDir, standbyPort)
      standbyRunning = true
    },
    close,
  }
}
