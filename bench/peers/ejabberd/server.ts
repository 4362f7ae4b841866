import { execFileSync, fork, spawn } from 'node:child_process'
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import pg from 'pg'
import { processCpuSeconds } from '../../cpu.ts'
import type { XmppJobs } from './xmpp-load.ts'

const CTL = '/usr/sbin/ejabberdctl'
/** Debian's PostgreSQL driver for ejabberd is a package of its own. */
const PGSQL_DRIVER = '/usr/lib/erlang/lib/p1_pgsql-1.1.20'
const SCHEMA = '/usr/share/ejabberd/sql/pg.sql'

/**
 * Debian's ejabberd (23.01 on bookworm) and its PostgreSQL driver, installed on first use as
 * bench/peers/postgraphile is: only this scenario needs them. The package's own service is not
 * started (the bench runs its own instance).
 */
function installEjabberd(): void {
  if (existsSync(CTL) && existsSync(PGSQL_DRIVER)) return
  console.error('[bench] installing ejabberd and erlang-p1-pgsql (apt-get, about 60 MB)…')
  const install = () =>
    execFileSync('apt-get', ['install', '-y', '--no-install-recommends', 'ejabberd', 'erlang-p1-pgsql'], {
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
      stdio: ['ignore', 'ignore', 'pipe'],
    })
  try {
    install()
  } catch {
    // A machine whose package lists were never read has none to install from.
    execFileSync('apt-get', ['update'], { stdio: 'ignore' })
    install()
  }
}

/** `${NAME}` in a template from this directory, filled in. */
const render = (file: string, values: Record<string, string | number>) =>
  readFileSync(path.join(import.meta.dirname, file), 'utf8').replace(/\$\{(\w+)\}/g, (_, name: string) => {
    if (values[name] === undefined) throw new Error(`${file}: no value for ${name}`)
    return String(values[name])
  })

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo
      server.close(() => resolve(port))
    })
  })

const accepts = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect(port, '127.0.0.1')
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })

export type Ejabberd = { port: number; cpuSeconds(): number; close(): Promise<void> }

/**
 * A throw-away database `name` on the bench's PostgreSQL with ejabberd's schema and `users`
 * accounts m<g>_<k> (plain passwords, as `auth_password_format: plain` reads them); resolves with
 * its URL and how to drop it.
 */
export async function createEjabberdDatabase(adminUrl: string, name: string, rooms: number, members: number) {
  const admin = new pg.Client({ connectionString: adminUrl })
  await admin.connect()
  await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)
  await admin.query(`CREATE DATABASE "${name}"`)
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  const client = new pg.Client({ connectionString: url.toString() })
  await client.connect()
  try {
    await client.query(readFileSync(SCHEMA, 'utf8'))
    await client.query(
      `INSERT INTO users (username, password) SELECT 'm' || g || '_' || k, 'pw' FROM generate_series(0, $1 - 1) g, generate_series(0, $2 - 1) k`,
      [rooms, members],
    )
  } finally {
    await client.end()
  }
  return {
    url: url.toString(),
    drop: async () => {
      await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)
      await admin.end()
    },
  }
}

/**
 * ejabberd over `databaseUrl` (bench/peers/ejabberd/ejabberd.yml: rooms archived with mod_mam in
 * SQL, `poolSize` connections as Parley gets), its configuration, logs and Mnesia spool in a
 * temporary directory, run by ejabberdctl as the package's `ejabberd` user. Resolves once it
 * accepts connections; close() stops it and removes the directory.
 */
export async function startEjabberd(databaseUrl: string, poolSize: number): Promise<Ejabberd> {
  installEjabberd()
  const url = new URL(databaseUrl)
  // ejabberd reaches PostgreSQL over TCP: a socket directory in the URL is the same server on localhost.
  const dir = mkdtempSync(path.join(os.tmpdir(), 'parley-bench-ejabberd-'))
  chmodSync(dir, 0o755)
  const port = await freePort()
  writeFileSync(
    path.join(dir, 'ejabberd.yml'),
    render('ejabberd.yml', {
      SQL_HOST: url.hostname || '127.0.0.1',
      SQL_PORT: url.port || 5432,
      SQL_DATABASE: url.pathname.slice(1),
      SQL_USER: decodeURIComponent(url.username) || 'postgres',
      POOL: poolSize,
      PORT: port,
    }),
  )
  writeFileSync(
    path.join(dir, 'ejabberdctl.cfg'),
    render('ejabberdctl.cfg', { NODE: `bench${process.pid}@localhost`, DIR: dir }),
  )
  writeFileSync(path.join(dir, 'inetrc'), '')
  if (process.getuid?.() === 0) execFileSync('chown', ['-R', 'ejabberd:ejabberd', dir])
  const child = spawn(CTL, ['--config-dir', dir, '--logs', dir, '--spool', dir, 'foreground'], {
    cwd: dir,
    detached: true,
    stdio: 'ignore',
  })
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  let running = true
  void exited.then(() => (running = false))
  // Its port opens before its modules and SQL pool are up: `ejabberdctl started` waits for all of it.
  const ctl = ['--config-dir', dir, '--logs', dir, '--spool', dir]
  try {
    execFileSync(CTL, [...ctl, 'started'], { stdio: 'ignore', timeout: 120_000 })
    if (!(await accepts(port))) throw new Error(`not listening on ${port}`)
  } catch (error) {
    const log = path.join(dir, 'ejabberd.log')
    if (running) process.kill(-child.pid!, 'SIGKILL')
    const tail = existsSync(log) ? readFileSync(log, 'utf8').slice(-2000) : ''
    rmSync(dir, { recursive: true, force: true })
    throw new Error(`ejabberd did not start (${String(error)}):\n${tail}`, { cause: error })
  }
  // The Erlang VM's OS process, whose CPU is ejabberd's.
  const beam = Number(readFileSync(path.join(dir, 'ejabberd.pid'), 'utf8').trim())
  return {
    port,
    cpuSeconds: () => processCpuSeconds(beam),
    async close() {
      // The VM stops cleanly on SIGTERM (su runs it outside ejabberdctl's process group).
      process.kill(beam, 'SIGTERM')
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 15_000))])
      if (running) process.kill(beam, 'SIGKILL')
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

export type XmppClient = {
  [J in keyof XmppJobs]: (args: Parameters<XmppJobs[J]>[0]) => ReturnType<XmppJobs[J]>
} & { /** Ends the process, and with it every session. */ close(): void }

/** The XMPP load generator (xmpp-load.ts) in its own process. */
export function startXmppClient(): XmppClient {
  const child = fork(path.join(import.meta.dirname, 'xmpp-load.ts'), { execArgv: ['--import', 'tsx'] })
  const waiting = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>()
  let next = 0
  child.on('message', ({ id, result, error }: { id: number; result?: unknown; error?: string }) => {
    const w = waiting.get(id)!
    waiting.delete(id)
    if (error !== undefined) w.reject(new Error(`xmpp load client: ${error}`))
    else w.resolve(result)
  })
  child.on('exit', (code) => {
    for (const w of waiting.values()) w.reject(new Error(`xmpp load client exited with ${code}`))
  })
  const call = (job: string) => (args: unknown) =>
    new Promise((resolve, reject) => {
      const id = next++
      waiting.set(id, { resolve, reject })
      child.send({ id, job, args })
    })
  return { open: call('open'), run: call('run'), close: () => void child.kill() } as XmppClient
}
