import { LRUCache } from 'lru-cache'
import { z } from 'zod'
import type { Db } from '../../db/client.ts'
import { badInput } from '../core/errors.ts'
import type { UserKind, UserRecord } from '../../store/records.ts'
import { ensureUser, findUserByHandle, upsertUsers as storeUpsertUsers } from '../../store/users.ts'
import type { Identity, App, Viewer } from '../core/app.ts'
import { LIMITS } from '../core/limits.ts'
import { requireOperator } from '../policy/policy.ts'
import { userDocument } from '../search/documents.ts'

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
 * upsertUsers shows within that time on every instance.
 */
export function createViewerResolver(db: Db, ttlMs = 5_000) {
  const cache = new LRUCache<string, { id: number; kind: UserKind }>({ max: 100_000, ttl: ttlMs })
  return async (identity: Identity): Promise<Viewer> => {
    let user = cache.get(identity.handle)
    if (!user) {
      const created = { handle: identity.handle, displayName: identity.name ?? identity.handle, kind: identity.kind }
      user =
        (await findUserByHandle(db, identity.handle)) ??
        (await ensureUser(db, { ...created, searchDocument: userDocument(created) }))
      cache.set(identity.handle, user)
    }
    return { userId: user.id, handle: identity.handle, kind: user.kind, isOperator: identity.isOperator }
  }
}
