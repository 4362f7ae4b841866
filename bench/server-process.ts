import { execFileSync, spawn } from 'node:child_process'
import { existsSync, readFileSync, statSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { processCpuSeconds } from './cpu.ts'
import { AUTH_SECRET } from './support.ts'

const ROOT = path.resolve(import.meta.dirname, '..')

/** What a measured server is: the compiled build `npm start` runs, or the source through tsx (`npm run dev`). */
export type ServerBuild = 'compiled' | 'tsx'

export type ParleyProcess = {
  endpoint: string
  pid: number
  /** CPU seconds (user + system) the server process has used so far. */
  cpuSeconds(): number
  rssBytes(): number
  close(): Promise<void>
}

const logMessage = (line: string): string => {
  try {
    return (JSON.parse(line) as { msg?: string }).msg ?? ''
  } catch {
    return ''
  }
}

const UNLIMITED = '1000000/1'
const BENCH_RATE_LIMITS =
  ['send', 'sendSustained', 'largeGroupSend', 'largeGroupSendSustained', 'mutation', 'typing', 'subscribe']
    .map((rule) => `${rule}=${UNLIMITED}`)
    .join(',') + ',openSockets=off'

/** Node options for the measured servers, such as `--cpu-prof --cpu-prof-dir=/tmp/prof` (NODE_OPTIONS refuses --cpu-prof). */
const NODE_ARGS = process.env.BENCH_SERVER_NODE_ARGS?.split(' ').filter(Boolean) ?? []

const commandOf = (build: ServerBuild) => [
  ...NODE_ARGS,
  ...(build === 'tsx' ? ['--import', 'tsx', 'src/main.ts'] : ['dist/src/main.js']),
]

let built = false
/** `npm run build`, once per bench process, as `npm start` does before it starts the server. */
export function buildOnce(): void {
  if (!built) execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'ignore' })
  built = true
}

/**
 * Parley as a user runs it: its own process, what `npm start` runs (the compiled build; or the source
 * through tsx, as `npm run dev` does), NODE_ENV=production, the default logging on stdout. Resolves once
 * it listens. `env` adds settings (RESYNC_LIMIT, SEND_COALESCING, …). `npm start` builds, then execs
 * `node dist/src/main.js`, so measuring that command directly leaves nothing out.
 */
export async function startParleyProcess(
  databaseUrl: string,
  opts: {
    poolSize?: number
    env?: Record<string, string>
    build?: ServerBuild
    /** Another checkout, built by the caller (bench/ab.ts). */ root?: string
  } = {},
): Promise<ParleyProcess> {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    NODE_ENV: 'production',
    DATABASE_URL: databaseUrl,
    DATABASE_POOL_SIZE: String(opts.poolSize ?? 40),
    AUTH_SECRET,
    PORT: '0',
    HOST: '127.0.0.1',
    // The limits stay on, so their counting is measured, but far above what a scenario sends: each
    // plays many clients from a few tokens (the soak passes its own, the defaults).
    RATE_LIMITS: BENCH_RATE_LIMITS,
    ...opts.env,
  }
  const build = opts.build ?? 'compiled'
  const root = opts.root ?? ROOT
  if (build === 'compiled' && root === ROOT) buildOnce()
  const child = spawn(process.execPath, commandOf(build), { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] })
  const recent: string[] = []
  const remember = (line: string) => {
    recent.push(line)
    if (recent.length > 20) recent.shift()
  }
  createInterface({ input: child.stderr }).on('line', remember)
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  // With WORKERS, each worker writes the line: connections opened before all listen would all stay on the first.
  const workers = env.WORKERS === 'auto' ? availableParallelism() : Number(env.WORKERS ?? 1)
  let listening = 0
  const endpoint = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      remember(line)
      // The JSON log line start-up writes once it listens.
      const url = /^GraphQL [^:]*: (http:\/\/\S+)$/.exec(logMessage(line))?.[1]
      if (url && ++listening === workers) resolve(url.replace('localhost', '127.0.0.1'))
    })
    void exited.then((code) => reject(new Error(`Parley exited with ${code} before listening:\n${recent.join('\n')}`)))
  })
  return {
    endpoint,
    pid: child.pid!,
    cpuSeconds: () => processCpuSeconds(child.pid!),
    rssBytes: () => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))![1]) * 1024,
    async close() {
      child.kill('SIGTERM')
      await exited
    },
  }
}

/** A server process of bench/'s own, not Parley: its endpoint, its CPU and how to stop it. */
export type BareServer = { endpoint: string; pid: number; cpuSeconds(): number; close(): void }

/**
 * `command args` as a server that prints its endpoint on its first stdout line; resolves once it has.
 * What it writes to stderr before that is shown only if it exits instead (PostGraphile warns about
 * every column type it skips while it starts); after that, stderr goes to the bench's.
 */
async function startPrintingServer(
  name: string,
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<BareServer> {
  const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  const held: string[] = []
  let listening = false
  createInterface({ input: child.stderr }).on('line', (line) => (listening ? console.error(line) : held.push(line)))
  const endpoint = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', resolve)
    child.once('exit', (code) => reject(new Error(`${name} exited with ${code}:\n${held.slice(-30).join('\n')}`)))
    // Not started at all (its command missing): without a listener the error would end the bench.
    child.once('error', (error) => reject(new Error(`${name} did not start: ${error.message}`)))
  })
  listening = true
  return { endpoint, pid: child.pid!, cpuSeconds: () => processCpuSeconds(child.pid!), close: () => void child.kill() }
}

/**
 * One of bench/'s bare node:http servers (bare-http.ts, bare-history.ts: no GraphQL server behind
 * them), its own process with `args`; resolves once it prints its URL.
 */
export function startBareServer(script: string, args: string[] = []): Promise<BareServer> {
  return startPrintingServer(
    script,
    process.execPath,
    ['--import', 'tsx', path.join(import.meta.dirname, script), ...args],
    { NODE_ENV: 'production' },
  )
}

const POSTGRAPHILE = path.join(import.meta.dirname, 'peers/postgraphile')

/**
 * bench/peers/postgraphile's packages, installed on first use: PostGraphile 5 and the Node it runs on
 * (as an npm package, the same as the root's since decision 0268), which the root `npm ci` must not
 * install: only the peer scenario needs them. Installed again when its lockfile is newer than the install.
 */
function installPostGraphile(): void {
  const installed = path.join(POSTGRAPHILE, 'node_modules/.package-lock.json')
  if (
    existsSync(installed) &&
    statSync(installed).mtimeMs >= statSync(path.join(POSTGRAPHILE, 'package-lock.json')).mtimeMs
  )
    return
  console.error('[bench] installing bench/peers/postgraphile (npm ci: PostGraphile 5 and Node 24, about 190 MB)…')
  try {
    execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], {
      cwd: POSTGRAPHILE,
      stdio: ['ignore', 'ignore', 'pipe'],
    })
  } catch (error) {
    // npm's message without its stack.
    const stderr = String((error as { stderr?: Buffer }).stderr ?? '')
      .split('\n')
      .filter((line) => !/^npm error\s+at /.test(line))
    throw new Error(
      `could not install bench/peers/postgraphile (npm ci there); the peer scenario needs the npm registry once:\n${stderr.join('\n').trim()}`,
      { cause: error },
    )
  }
}

/**
 * PostGraphile 5 over `databaseUrl` in production mode (bench/peers/postgraphile/server.mjs), on the
 * Node that directory installs, with `poolSize` connections (the measured Parley's: neither side
 * has more connections to work with). An install that fails rejects, as a start that fails does.
 */
export async function startPostGraphile(databaseUrl: string, poolSize: number): Promise<BareServer> {
  installPostGraphile()
  const node = path.join(POSTGRAPHILE, 'node_modules/.bin/node')
  return startPrintingServer(
    'PostGraphile',
    node,
    [...NODE_ARGS, path.join(POSTGRAPHILE, 'server.mjs'), databaseUrl, String(poolSize)],
    {
      NODE_ENV: 'production',
      GRAPHILE_ENV: 'production',
    },
  )
}
