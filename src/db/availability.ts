import { retryLater, type DomainError } from '../domain/core/index.ts'

/** What a client is told to wait before retrying; also how often an outage is probed. */
export const RETRY_AFTER_MS = 1_000

/** Socket failures: the server is down, restarting, unreachable, or dropped the connection. */
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
])
/** SQLSTATE: connection exceptions (08…), shutting down or starting up (57P01-57P03), no connection slot left (53300). */
const SQLSTATE = /^(08[0-9A-Z]{3}|57P0[123]|53300)$/
/** The driver adapter's names for the same failures. */
const ADAPTER_KINDS = new Set(['DatabaseNotReachable', 'ConnectionClosed', 'SocketTimeout', 'TooManyConnections'])
/** Prisma's: cannot reach the server, timed out reaching it, the server closed the connection. */
const PRISMA_CODES = new Set(['P1001', 'P1002', 'P1017'])
/** node-postgres says a dropped connection in words only. */
const PG_MESSAGES =
  /^(Connection terminated( unexpectedly)?|Client has encountered a connection error and is not queryable)$/

type Inspectable = {
  code?: unknown
  kind?: unknown
  originalCode?: unknown
  message?: unknown
  cause?: unknown
  originalError?: unknown
  errors?: unknown
  meta?: { driverAdapterError?: unknown }
}

/**
 * Whether `error` means the database cannot be reached or is restarting: a temporary outage, not a
 * bug and not bad input. Looks through the wrappers Prisma, its driver adapter and graphql-js put
 * around the driver's error.
 */
export function isDatabaseOutage(error: unknown): boolean {
  const seen = new Set<unknown>()
  const pending: unknown[] = [error]
  while (pending.length) {
    const next = pending.pop()
    if (typeof next !== 'object' || next === null || seen.has(next)) continue
    seen.add(next)
    const e = next as Inspectable
    const code = typeof e.code === 'string' ? e.code : typeof e.originalCode === 'string' ? e.originalCode : ''
    if (SOCKET_CODES.has(code) || SQLSTATE.test(code) || PRISMA_CODES.has(code)) return true
    if (typeof e.kind === 'string' && ADAPTER_KINDS.has(e.kind)) return true
    if (typeof e.message === 'string' && PG_MESSAGES.test(e.message)) return true
    pending.push(e.cause, e.originalError, e.meta?.driverAdapterError, ...(Array.isArray(e.errors) ? e.errors : []))
  }
  return false
}

export type AvailabilityState = { available: true } | { available: false; since: Date; reason: string }

/** Where the two lines of an outage go (Yoga's logger interface). */
export type AvailabilityLog = { warn(message: string): void; info(message: string): void }

const reasonOf = (error: unknown) => {
  const e = error as Inspectable
  const found = [e, e.cause, (e.meta?.driverAdapterError as Inspectable | undefined)?.cause].find(
    (x) => typeof (x as Inspectable)?.code === 'string',
  ) as Inspectable | undefined
  const message = error instanceof Error ? error.message.replace(/\s+/g, ' ').trim() : String(error)
  return found ? `${String(found.code)}: ${message}` : message
}

/**
 * The database's availability as this instance sees it. The first outage error logs one line and
 * starts a probe every RETRY_AFTER_MS; the first probe that succeeds logs one line and ends the
 * outage. Requests are never held back: each still tries the database, and one that fails meanwhile
 * is answered UNAVAILABLE with `retryAfterMs`, without a line of its own.
 */
export class DatabaseAvailability {
  private current: AvailabilityState = { available: true }
  private timer: NodeJS.Timeout | undefined
  private closed = false

  constructor(
    private readonly probe: () => Promise<unknown>,
    private readonly log: AvailabilityLog,
    readonly retryAfterMs = RETRY_AFTER_MS,
  ) {}

  get state(): AvailabilityState {
    return this.current
  }

  /** For an error that means an outage (isDatabaseOutage), what the client gets, the first of an outage logged; else null. */
  refuseIfOutage(error: unknown): DomainError | null {
    if (!isDatabaseOutage(error)) return null
    if (this.current.available && !this.closed) {
      this.current = { available: false, since: new Date(), reason: reasonOf(error) }
      this.log.warn(`database unavailable (${this.current.reason}); answering UNAVAILABLE until it answers again`)
      this.scheduleProbe()
    }
    return retryLater('UNAVAILABLE', 'The database is unavailable; try again shortly.', this.retryAfterMs)
  }

  private scheduleProbe(): void {
    this.timer = setTimeout(() => void this.runProbe(), this.retryAfterMs)
    this.timer.unref()
  }

  private async runProbe(): Promise<void> {
    let timeout: NodeJS.Timeout | undefined
    const gaveUp = new Promise<never>(
      (_, reject) => (timeout = setTimeout(() => reject(new Error('probe timed out')), this.retryAfterMs * 5)),
    )
    try {
      await Promise.race([this.probe(), gaveUp])
      if (this.closed || this.current.available) return
      const downMs = Date.now() - this.current.since.getTime()
      this.current = { available: true }
      this.log.info(`database available again after ${downMs} ms`)
    } catch {
      if (!this.closed) this.scheduleProbe()
    } finally {
      clearTimeout(timeout)
    }
  }

  /** Stops probing (server shutdown). */
  close(): void {
    this.closed = true
    clearTimeout(this.timer)
  }
}
