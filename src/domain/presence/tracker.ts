import type { App } from '../core/app.ts'
import type { PresenceRegistry } from '../../realtime/presence.ts'
import { findPresenceAudience, touchLastSeen } from '../../store/presence.ts'

/** A change is announced this long after it settles, so a flapping connection sends nothing per flap. */
const DEFAULT_DEBOUNCE_MS = 2000

/**
 * One instance's part of presence (docs/presence.md): counts the live subscriptions each user holds
 * here, tells the registry of a user's first and last one, stamps last seen when the last closes,
 * and, once a user's state settled for `debounceMs`, announces the change to their PRIVATE-chat peers
 * (the registry lets one instance announce each change). Also announces the users of instances
 * that died without closing their subscriptions.
 */
export class PresenceTracker {
  private readonly held = new Map<number, number>()
  private readonly settling = new Map<number, { timer: NodeJS.Timeout; change: Promise<unknown> }>()
  private readonly sweep: NodeJS.Timeout
  private readonly log: (message: string, error?: unknown) => void

  constructor(
    private readonly app: App,
    readonly registry: PresenceRegistry,
    opts: { debounceMs?: number; sweepMs?: number; log?: (message: string, error?: unknown) => void } = {},
  ) {
    this.debounceMs = opts.debounceMs ?? DEFAULT_DEBOUNCE_MS
    this.log = opts.log ?? ((message, error) => console.error(`[parley] ${message}`, error ?? ''))
    this.sweep = setInterval(() => void this.announceOrphans(), opts.sweepMs ?? 5000)
    this.sweep.unref()
  }

  private readonly debounceMs: number

  connected(userId: number): void {
    const count = (this.held.get(userId) ?? 0) + 1
    this.held.set(userId, count)
    if (count === 1) this.settle(userId, this.registry.arrive(userId))
  }

  disconnected(userId: number): void {
    const count = (this.held.get(userId) ?? 1) - 1
    if (count > 0) return void this.held.set(userId, count)
    this.held.delete(userId)
    const left = Promise.all([this.registry.leave(userId), touchLastSeen(this.app.db, [userId], new Date())])
    this.settle(userId, left)
  }

  /** Online on any instance, among `userIds`; when the registry is away, nobody (push errs towards notifying). */
  async onlineAmong(userIds: readonly number[]): Promise<Set<number>> {
    return this.registry.onlineAmong(userIds).catch((error: unknown) => {
      this.log('presence lookup failed; treating users as offline', error)
      return new Set<number>()
    })
  }

  private settle(userId: number, changing: Promise<unknown>): void {
    // Handled at once: a change superseded before it settles is never awaited, and a failed write of
    // last seen (the database away) must not become an unhandled rejection; the state is announced anyway.
    const change = changing.catch((error: unknown) => this.log('presence change failed', error))
    clearTimeout(this.settling.get(userId)?.timer)
    const timer = setTimeout(() => {
      this.settling.delete(userId)
      void this.announceAfter(change, [userId])
    }, this.debounceMs)
    this.settling.set(userId, { timer, change })
  }

  private announceAfter(change: Promise<unknown>, userIds: readonly number[]): Promise<void> {
    return change
      .then(() => this.announce(userIds))
      .catch((error: unknown) => this.log('presence change failed', error))
  }

  private async announce(userIds: readonly number[]): Promise<void> {
    const online = await this.registry.onlineAmong(userIds)
    for (const userId of userIds) {
      const isOnline = online.has(userId)
      if (!(await this.registry.announce(userId, isOnline))) continue
      const audience = await findPresenceAudience(this.app.db, userId)
      if (!audience.visible || !audience.peerIds.length) continue
      const lastSeenAt = isOnline ? null : (audience.lastSeenAt?.toISOString() ?? null)
      void this.app.realtime.publish(
        audience.peerIds.map((peerId) => ({
          type: 'presence',
          userId: peerId,
          subjectId: userId,
          online: isOnline,
          lastSeenAt,
        })),
      )
    }
  }

  /** Users of an instance that stopped heartbeating: last seen now, and announced offline. */
  private async announceOrphans(): Promise<void> {
    try {
      const users = await this.registry.orphaned()
      if (!users.length) return
      const online = await this.registry.onlineAmong(users)
      await touchLastSeen(
        this.app.db,
        users.filter((id) => !online.has(id)),
        new Date(),
      )
      await this.announce(users)
    } catch (error) {
      this.log('presence sweep failed', error)
    }
  }

  /** Announces what is still settling (the hub closed its subscriptions first), then leaves the registry. */
  async close(): Promise<void> {
    clearInterval(this.sweep)
    const pending = [...this.settling]
    this.settling.clear()
    for (const [, { timer }] of pending) clearTimeout(timer)
    await Promise.all(pending.map(([userId, { change }]) => this.announceAfter(change, [userId])))
    await this.registry.close()
  }
}
