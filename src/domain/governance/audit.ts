import type { Tx } from '../../db/client.ts'
import { findAuditEntry, insertAuditEntry, listAuditEntries, type AuditEntryRecord } from '../../store/governance.ts'
import { notFound } from '../core/errors.ts'
import { readerOf, type App, type Viewer } from '../core/app.ts'
import { keysetCursor } from '../core/cursors.ts'
import { parseId } from '../core/ids.ts'
import { pageSize } from '../core/input.ts'
import { forwardPage, type Connection } from '../core/paging.ts'
import { requireOperator } from '../policy/policy.ts'

/**
 * Records what an operator read or did, in the transaction of the read or the action itself: the
 * entry exists exactly when what it records happened. `targetId` is the global id acted on.
 */
export async function recordAudit(
  tx: Tx,
  viewer: Viewer,
  action: string,
  targetId: string | null,
  detail: unknown = null,
): Promise<void> {
  await insertAuditEntry(tx, { actorId: viewer.userId, action, targetId, detail })
}

const AUDIT_CURSOR = keysetCursor('audit', ['id'])

/** Query.auditLog: operators only, newest first, optionally one actor's or one action's. */
export async function auditLog(
  app: App,
  viewer: Viewer,
  args: { first?: number | null; after?: string | null; actorId?: string | null; action?: string | null },
): Promise<Connection<AuditEntryRecord>> {
  requireOperator(viewer, 'read the audit log')
  const limit = pageSize(args.first, 'first')
  const after = AUDIT_CURSOR.decode(args.after, 'after')
  const filter = { actorId: args.actorId ? parseId(args.actorId, 'User') : null, action: args.action ?? null }
  const rows = await listAuditEntries(readerOf(app, viewer), filter, after?.[0] ?? null, limit + 1)
  return forwardPage(rows, limit, (e) => AUDIT_CURSOR.encode(e.id), after !== null)
}

/** node(id) of an AuditEntry: operators only; anyone else is told it does not exist. */
export async function requireAuditEntry(app: App, viewer: Viewer, id: string): Promise<AuditEntryRecord> {
  const entry = viewer.isOperator ? await findAuditEntry(readerOf(app, viewer), parseId(id, 'AuditEntry')) : null
  return entry ?? Promise.reject(notFound('AuditEntry'))
}
