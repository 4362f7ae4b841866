import { randomUUID } from 'node:crypto'
import { Redis } from 'ioredis'

/**
 * Who holds a live subscription on some instance (presence, docs/presence.md). Each instance
 * reports only its own first arrival and last departure per user; `onlineAmong` answers for all
 * instances. In process for one instance (or apps of one process sharing it), else Redis.
 */
export type PresenceRegistry = {
  /** This instance now holds the user's first live subscription. */
  arrive(userId: number): Promise<void>
  /** This instance's last live subscription of the user closed. */
  leave(userId: number): Promise<void>
  /** Those of `userIds` online on any live instance. */
  onlineAmong(userIds: readonly number[]): Promise<Set<number>>
  /** Records `online` as the user's announced state; true when it changed, so one instance announces each change. */
  announce(userId: number, online: boolean): Promise<boolean>
  /** Users of instances that stopped heartbeating since the last call (each dead instance is claimed by one caller). */
  orphaned(): Promise<number[]>
  close(): Promise<void>
}

/** One process: counts per user of the instances (apps) holding them. */
export function createLocalPresence(): PresenceRegistry {
  const holders = new Map<number, number>()
  const announced = new Map<number, boolean>()
  return {
    async arrive(userId) {
      holders.set(userId, (holders.get(userId) ?? 0) + 1)
    },
    async leave(userId) {
      const left = (holders.get(userId) ?? 1) - 1
      if (left > 0) holders.set(userId, left)
      else holders.delete(userId)
    },
    async onlineAmong(userIds) {
      return new Set(userIds.filter((id) => holders.has(id)))
    },
    async announce(userId, online) {
      const changed = (announced.get(userId) ?? false) !== online
      announced.set(userId, online)
      return changed
    },
    async orphaned() {
      return []
    },
    async close() {},
  }
}

const userKey = (userId: number) => `presence:user:${userId}`
const aliveKey = (instance: string) => `presence:alive:${instance}`
const instanceUsersKey = (instance: string) => `presence:users-of:${instance}`
const INSTANCES = 'presence:instances'

/** For each user key, 1 when any instance in its set still heartbeats. */
const ONLINE_AMONG = `
local out = {}
for i, key in ipairs(KEYS) do
  out[i] = 0
  for _, instance in ipairs(redis.call('SMEMBERS', key)) do
    if redis.call('EXISTS', 'presence:alive:' .. instance) == 1 then out[i] = 1 break end
  end
end
return out`

/**
 * Several instances: a set of instance ids per user, and a heartbeat key per instance that expires
 * `ttlMs` after the instance last refreshed it (every third of it), so a killed instance's users go
 * offline within `ttlMs`.
 */
export function createRedisPresence(
  url: string,
  opts: { ttlMs?: number; log?: (message: string, error?: unknown) => void } = {},
): PresenceRegistry {
  const ttlMs = opts.ttlMs ?? 45_000
  const log = opts.log ?? ((message, error) => console.error(`[parley] ${message}`, error ?? ''))
  const redis = new Redis(url, { maxRetriesPerRequest: 1 })
  redis.on('error', () => {})
  redis.defineCommand('onlineAmong', { lua: ONLINE_AMONG })
  const instance = randomUUID()
  const beat = () =>
    redis
      .multi()
      .set(aliveKey(instance), '1', 'PX', ttlMs)
      .sadd(INSTANCES, instance)
      .exec()
      .catch((error: unknown) => log('presence heartbeat failed', error))
  void beat()
  const timer = setInterval(() => void beat(), Math.max(50, Math.floor(ttlMs / 3)))
  timer.unref()
  return {
    async arrive(userId) {
      await redis.multi().sadd(userKey(userId), instance).sadd(instanceUsersKey(instance), String(userId)).exec()
    },
    async leave(userId) {
      await redis.multi().srem(userKey(userId), instance).srem(instanceUsersKey(instance), String(userId)).exec()
    },
    async onlineAmong(userIds) {
      if (!userIds.length) return new Set()
      const run = (redis as unknown as { onlineAmong(n: number, ...keys: string[]): Promise<number[]> }).onlineAmong
      const flags = await run.call(redis, userIds.length, ...userIds.map(userKey))
      return new Set(userIds.filter((_, i) => flags[i] === 1))
    },
    async announce(userId, online) {
      const before = await redis.getset(`presence:announced:${userId}`, online ? '1' : '0')
      return (before === '1') !== online
    },
    async orphaned() {
      const users: number[] = []
      for (const other of await redis.smembers(INSTANCES)) {
        if (other === instance || (await redis.exists(aliveKey(other)))) continue
        // SREM answers 1 to one caller only: that instance cleans the dead one up.
        if (!(await redis.srem(INSTANCES, other))) continue
        const ids = await redis.smembers(instanceUsersKey(other))
        const cleanup = redis.multi().del(instanceUsersKey(other))
        for (const id of ids) cleanup.srem(userKey(Number(id)), other)
        await cleanup.exec()
        users.push(...ids.map(Number))
      }
      return users
    },
    async close() {
      clearInterval(timer)
      // Leaving at once (rather than after the heartbeat runs out) lets the others announce it.
      await redis
        .multi()
        .del(aliveKey(instance))
        .exec()
        .catch(() => {})
      redis.disconnect()
    },
  }
}
