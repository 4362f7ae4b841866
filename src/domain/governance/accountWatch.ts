import { ACCOUNTS_TOPIC, type RealtimeEvent } from '../../realtime/events.ts'
import type { Realtime } from '../../realtime/pubsub.ts'

/** A user deactivated or reactivated, as every instance hears it. */
export type AccountChange = { userId: number; handle: string; deactivated: boolean }

/**
 * One instance's view of account changes (deactivateUser, reactivateUser) from any instance,
 * through the bus's accounts topic: the token checks drop what they cached of the user, and the
 * user's open sockets and subscriptions end at once when deactivated. A change made here applies
 * here before the mutation answers (`apply`), without waiting for the bus to echo it.
 */
export class AccountWatch {
  private readonly listeners = new Set<(change: AccountChange) => void>()
  private readonly enders = new Map<number, Set<() => void>>()
  /** Resolves once the bus delivers account changes to this instance. */
  readonly ready: Promise<void>

  constructor(realtime: Realtime) {
    const listener = (event: RealtimeEvent) => event.type === 'account' && this.apply(event)
    // A bus that cannot listen (Redis away) still serves: caches expire on their own within seconds.
    this.ready = realtime.listen(ACCOUNTS_TOPIC, listener).catch(() => {})
  }

  /** Calls `listener` for every change, from this instance or another. */
  onChange(listener: (change: AccountChange) => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  /** Calls `end` if the user is deactivated while it is registered; returns the cancel. */
  endOnDeactivation(userId: number, end: () => void): () => void {
    let ends = this.enders.get(userId)
    if (!ends) this.enders.set(userId, (ends = new Set()))
    ends.add(end)
    return () => {
      ends.delete(end)
      if (!ends.size && this.enders.get(userId) === ends) this.enders.delete(userId)
    }
  }

  apply(change: AccountChange): void {
    for (const listener of this.listeners) listener(change)
    if (!change.deactivated) return
    const ends = this.enders.get(change.userId)
    this.enders.delete(change.userId)
    for (const end of ends ?? []) end()
  }
}

/** The per-instance state deactivation needs (src/app.ts builds it). */
export type AccountsApp = { accounts: AccountWatch }
