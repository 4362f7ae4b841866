/**
 * What an outbox worker (webhook deliveries, push jobs) runs on: claims of leased work, each claimed
 * item run at most `concurrency` at a time, a poll, a minutely sweep, and a stop that waits for the
 * items in flight. Any number of instances may run one: the claim's SKIP LOCKED and leases share the work.
 */
export type LeasedWorkerOptions<T> = {
  /** Names the worker in what it logs ("webhook", "push"). */
  name: string
  log: (message: string) => void
  pollMs: number
  concurrency: number
  /** Leases up to `limit` due items. */
  claim(limit: number): Promise<T[]>
  /** Runs one claimed item to its end (its outcome recorded); a rejection is logged. */
  run(item: T): Promise<void>
  /** Runs every minute (retention). */
  sweep(): Promise<unknown>
}

export type LeasedWorker = {
  /** Claims now (new work committed, an item finished), not at the next poll. */
  wake(): void
  /** Claims no more and resolves once every item in flight has ended. */
  stop(): Promise<void>
}

export function startLeasedWorker<T>(opts: LeasedWorkerOptions<T>): LeasedWorker {
  const { name, log } = opts
  const inFlight = new Set<Promise<void>>()
  let stopped = false
  let claiming: Promise<void> | null = null
  let again = false
  let claimFailure: string | null = null

  function start(item: T): void {
    const running: Promise<void> = opts
      .run(item)
      .catch((error: unknown) => log(`${name} work not recorded: ${String(error)}`))
      .finally(() => {
        inFlight.delete(running)
        wake()
      })
    inFlight.add(running)
  }

  // One claim at a time; a wake while one runs makes it go round again.
  function wake(): void {
    if (stopped) return
    if (claiming) {
      again = true
      return
    }
    claiming = (async () => {
      do {
        again = false
        const room = opts.concurrency - inFlight.size
        if (room <= 0) break
        const claimed = await opts.claim(room)
        claimed.forEach(start)
        if (claimed.length === room) again = true
      } while (again && !stopped)
    })()
      .then(() => {
        claimFailure = null
      })
      .catch((error: unknown) => {
        // Polled ten times a second: an outage is logged when it starts (or changes), not on every poll.
        const message = error instanceof Error ? error.message : String(error)
        if (message !== claimFailure) log(`${name} claim failed: ${message}`)
        claimFailure = message
      })
      .finally(() => {
        claiming = null
        // Asked for while the last round was finishing: go round once more.
        if (again) wake()
      })
  }

  const poll = setInterval(wake, opts.pollMs)
  const sweep = setInterval(
    () => void opts.sweep().catch((error: unknown) => log(`${name} sweep failed: ${String(error)}`)),
    60_000,
  )
  wake()
  return {
    wake,
    async stop() {
      stopped = true
      clearInterval(poll)
      clearInterval(sweep)
      await claiming
      await Promise.all(inFlight)
    },
  }
}
