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
  /** Waits this long between claims (woken often, it claims for all that woke it meanwhile). */
  claimGapMs?: number
}

export type LeasedWorker = {
  /** Claims now (new work committed), not at the next poll. */
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
  // Wakes so far, and whether the last claim took all it had room for.
  let wakes = 0
  let full = false

  function start(item: T): void {
    const wakesBefore = wakes
    const running: Promise<void> = opts
      .run(item)
      .catch((error: unknown) => log(`${name} work not recorded: ${String(error)}`))
      .finally(() => {
        inFlight.delete(running)
        // Work may wait for this room, or have come in while the item ran (what it could not take).
        if (full || wakes !== wakesBefore) claim()
      })
    inFlight.add(running)
  }

  function wake(): void {
    wakes++
    claim()
  }

  // One claim at a time; asked for while one runs, it goes round again.
  function claim(): void {
    if (stopped) return
    if (claiming) {
      again = true
      return
    }
    claiming = (async () => {
      do {
        again = false
        const room = opts.concurrency - inFlight.size
        full = room <= 0
        if (full) break
        const claimed = await opts.claim(room)
        claimed.forEach(start)
        full = claimed.length === room
        if (full) again = true
        if (again && opts.claimGapMs) await new Promise((resolve) => setTimeout(resolve, opts.claimGapMs))
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
        if (again) claim()
      })
  }

  const poll = setInterval(claim, opts.pollMs)
  const sweep = setInterval(
    () => void opts.sweep().catch((error: unknown) => log(`${name} sweep failed: ${String(error)}`)),
    60_000,
  )
  claim()
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
