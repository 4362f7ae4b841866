import { execFileSync, spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
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
    return String((JSON.parse(line) as { msg?: unknown }).msg ?? '')
  } catch {
    return ''
  }
}

const UNLIMITED = '1000000/1'
const BENCH_RATE_LIMITS = ['send', 'sendSustained', 'largeGroupSend', 'largeGroupSendSustained', 'mutation', 'typing', 'subscribe'].map((rule) => `${rule}=${UNLIMITED}`).join(',') + ',openSockets=off'

/** Node options for the measured servers, such as `--cpu-prof --cpu-prof-dir=/tmp/prof` (NODE_OPTIONS refuses --cpu-prof). */
const NODE_ARGS = process.env.BENCH_SERVER_NODE_ARGS?.split(' ').filter(Boolean) ?? []

const commandOf = (build: ServerBuild) => [...NODE_ARGS, ...(build === 'tsx' ? ['--import', 'tsx', 'src/main.ts'] : ['dist/src/main.js'])]

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
  opts: { poolSize?: number; env?: Record<string, string>; build?: ServerBuild; /** Another checkout, built by the caller (bench/ab.ts). */ root?: string } = {},
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
  const endpoint = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      remember(line)
      // The JSON log line start-up writes once it listens.
      const url = /^GraphQL [^:]*: (http:\/\/\S+)$/.exec(logMessage(line))?.[1]
      if (url) resolve(url.replace('localhost', '127.0.0.1'))
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

/**
 * One of bench/'s bare node:http servers (bare-http.ts, bare-history.ts: no GraphQL server behind
 * them), its own process with `args`; resolves once it prints its URL.
 */
export async function startBareServer(script: string, args: string[] = []): Promise<{ endpoint: string; pid: number; cpuSeconds(): number; close(): void }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(import.meta.dirname, script), ...args], {
    env: { ...process.env, NODE_ENV: 'production' },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const endpoint = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', resolve)
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)))
  })
  return { endpoint, pid: child.pid!, cpuSeconds: () => processCpuSeconds(child.pid!), close: () => void child.kill() }
}
