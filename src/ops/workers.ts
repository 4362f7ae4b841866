import cluster from 'node:cluster'
import { relayBetweenWorkers } from '../realtime/workerBus.ts'

export type WorkersOptions = {
  count: number
  /** Added to each worker's environment: the database the primary opened, the resolved secret. */
  env: NodeJS.ProcessEnv
  /** Relay the bus and hold streams' live state for the workers (no Redis); with Redis each worker has its own connection. */
  relay: boolean
  shutdownGraceMs: number
  log: (message: string) => void
}

/** More restarts than this within RESTART_WINDOW_MS is a fault to report, not to retry forever. */
const MAX_RESTARTS = 5
const RESTART_WINDOW_MS = 60_000
/** Beyond the workers' own drain: their dependencies closing, and a process exit. */
const EXIT_MARGIN_MS = 10_000

/**
 * WORKERS > 1: this process (node:cluster's primary) serves nothing itself. It forks the workers, each
 * running the whole server on the shared port (the primary hands each new connection to the next
 * worker), relays the realtime bus between them and holds streamed messages' live state when there
 * is no Redis, starts another worker when one dies, and on SIGINT/SIGTERM asks every worker to drain,
 * resolving with the exit code once all have exited. A worker that dies before any has listened is a start-up failure: the rest are stopped.
 */
export function runWorkers(opts: WorkersOptions): Promise<number> {
  const restarts: number[] = []
  let listening = false
  let stopping = false
  let failed = false
  const live = () => Object.values(cluster.workers ?? {}).filter((worker) => worker !== undefined)
  const fork = () => cluster.fork(opts.env)

  return new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals, code: number) => {
      if (stopping) return
      stopping = true
      failed ||= code !== 0
      opts.log(`${signal}: stopping ${live().length} workers (at most ${opts.shutdownGraceMs} ms each to drain)`)
      for (const worker of live()) worker.process.kill(signal)
      setTimeout(() => {
        for (const worker of live()) worker.process.kill('SIGKILL')
      }, opts.shutdownGraceMs + EXIT_MARGIN_MS).unref()
    }
    const relay = opts.relay ? relayBetweenWorkers(live) : undefined
    if (relay) cluster.on('message', relay.message)
    cluster.on('listening', () => (listening = true))
    cluster.on('exit', (worker, code, signal) => {
      relay?.exited(worker)
      if (stopping) {
        if (code !== 0 && signal !== 'SIGTERM' && signal !== 'SIGINT') failed = true
        if (!live().length) resolve(failed ? 1 : 0)
        return
      }
      const now = Date.now()
      restarts.push(now)
      while (restarts[0]! < now - RESTART_WINDOW_MS) restarts.shift()
      const reason = signal ? `signal ${signal}` : `code ${code}`
      if (!listening || restarts.length > MAX_RESTARTS) {
        opts.log(
          `worker ${worker.process.pid} exited (${reason}); ${listening ? 'restarting too often' : 'none started'}: stopping`,
        )
        stop('SIGTERM', 1)
        if (!live().length) resolve(1)
        return
      }
      opts.log(`worker ${worker.process.pid} exited (${reason}); starting another`)
      fork()
    })
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => stop(signal, 0))
    for (let i = 0; i < opts.count; i++) fork()
    opts.log(`${opts.count} workers on one port${opts.relay ? ', events relayed between them by this process' : ''}`)
  })
}
