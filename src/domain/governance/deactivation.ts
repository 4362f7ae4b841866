import { setDeactivated } from '../../store/users.ts'
import type { UserRecord } from '../../store/records.ts'
import type { App, Viewer } from '../core/app.ts'
import { notFound } from '../core/errors.ts'
import { encodeGlobalId, parseId } from '../core/ids.ts'
import { transact } from '../core/transact.ts'
import { requireOperator } from '../policy/policy.ts'
import type { AccountsApp } from './accountWatch.ts'
import { recordAudit } from './audit.ts'

/**
 * deactivateUser and reactivateUser (operators): every token of the user is refused, or accepted
 * again, from the commit on. This instance applies the change before answering; the others hear it
 * on the bus and drop their cached standing of the user, ending the user's sockets and subscriptions.
 * Their messages, memberships and everything else stay as they are.
 */
export async function setUserDeactivated(
  app: App & AccountsApp,
  viewer: Viewer,
  userId: string,
  deactivated: boolean,
): Promise<UserRecord> {
  requireOperator(viewer, deactivated ? 'deactivate users' : 'reactivate users')
  const id = parseId(userId, 'User')
  const user = await transact(app, async (tx) => {
    const user = await setDeactivated(tx, id, deactivated)
    if (!user) throw notFound('User')
    await recordAudit(tx, viewer, deactivated ? 'user.deactivate' : 'user.reactivate', encodeGlobalId('User', id))
    const change = { userId: user.id, handle: user.handle, deactivated }
    return { result: user, events: [{ type: 'account' as const, ...change }] }
  })
  app.accounts.apply({ userId: user.id, handle: user.handle, deactivated })
  return user
}
