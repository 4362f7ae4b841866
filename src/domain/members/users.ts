import { LRUCache } from 'lru-cache'
import { z } from 'zod'
import type { Db } from '../../db/client.ts'
import { badInput, DomainError } from '../core/errors.ts'
import type { UserKind, UserRecord } from '../../store/records.ts'
import { ensureUser, findUserByHandle, upsertUsers as storeUpsertUsers, type UserStanding } from '../../store/users.ts'
import type { Identity, App, Viewer } from '../core/app.ts'
import { LIMITS } from '../core/limits.ts'
import { requireOperator } from '../policy/policy.ts'
import { userDocument } from '../search/documents.ts'
import type { AccountsApp } from '../governance/accountWatch.ts'

const UserInput = z.object({
  handle: z.string().trim().min(1).max(LIMITS.handleLength),
  displayName: z.string().trim().min(1).max(LIMITS.displayNameLength),
  kind: z.enum(['HUMAN', 'AGENT']).default('HUMAN'),
})

/** Operators register or update the host system's users by handle. */
export async function upsertUsers(
  app: App,
  viewer: Viewer,
  users: readonly { handle: string; displayName: string; kind?: UserKind | null }[],
): Promise<UserRecord[]> {
  requireOperator(viewer, 'upsert users')
  if (users.length < 1 || users.length > LIMITS.usersPerUpsert)
    throw badInput(`pass 1..${LIMITS.usersPerUpsert} users`, 'users')
  const parsed = users.map((u, i) => {
    const r = UserInput.safeParse({ ...u, kind: u.kind ?? undefined })
    if (!r.success)
      throw badInput(`users[${i}]: ${r.error.issues[0]!.message}`, `users.${i}.${r.error.issues[0]!.path.join('.')}`)
    return r.data
  })
  if (new Set(parsed.map((u) => u.handle)).size !== parsed.length) throw badInput('handles must be unique', 'users')
  return storeUpsertUsers(
    app.db,
    parsed.map((u) => ({ ...u, searchDocument: userDocument(u) })),
  )
}

/**
 * Resolves a token's identity to a user, creating the user on first sight with the token's name and
 * kind: the host system owns its users, and a valid token is proof enough. Cached for a few seconds, so a kind changed by
 * upsertUsers shows within that time on every instance. A deactivated user is refused
 * (UNAUTHENTICATED) with no database read per request: each instance's AccountWatch drops the user's
 * entry as soon as the bus carries the change, and a read that started before a change is not cached.
 */
export function createViewerResolver(app: { db: Db } & AccountsApp, ttlMs = 5_000) {
  const cache = new LRUCache<string, UserStanding>({ max: 100_000, ttl: ttlMs })
  let changes = 0
  app.accounts.onChange((change) => {
    changes++
    cache.delete(change.handle)
  })
  return async (identity: Identity): Promise<Viewer> => {
    let user = cache.get(identity.handle)
    if (!user) {
      const changesBefore = changes
      const created = { handle: identity.handle, displayName: identity.name ?? identity.handle, kind: identity.kind }
      user =
        (await findUserByHandle(app.db, identity.handle)) ??
        (await ensureUser(app.db, { ...created, searchDocument: userDocument(created) }))
      if (changes === changesBefore) cache.set(identity.handle, user)
    }
    if (user.deactivated)
      throw new DomainError('UNAUTHENTICATED', 'this user is deactivated', { http: { status: 401 } })
    return { userId: user.id, handle: identity.handle, kind: user.kind, isOperator: identity.isOperator }
  }
}
