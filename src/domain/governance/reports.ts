import { findVisibleMessages } from '../../store/messages.ts'
import {
  insertReport,
  findReport,
  listReports,
  resolveReport as storeResolveReport,
  type ReportRecord,
} from '../../store/governance.ts'
import { readerOf, type App, type Viewer } from '../core/app.ts'
import { keysetCursor } from '../core/cursors.ts'
import { badInput, notFound } from '../core/errors.ts'
import { parseMessageId, parseReportId } from '../core/ids.ts'
import { pageSize } from '../core/input.ts'
import { LIMITS } from '../core/limits.ts'
import { forwardPage, type Connection } from '../core/paging.ts'
import { transact } from '../core/transact.ts'
import { requireOperator } from '../policy/policy.ts'
import { recordAudit } from './audit.ts'

/**
 * reportMessage: anyone who can see the message (else NOT_FOUND, as for any message they cannot see)
 * reports it once; a repeat while their report is open changes nothing.
 */
export async function reportMessage(app: App, viewer: Viewer, messageId: string, reason: string): Promise<boolean> {
  const key = parseMessageId(messageId)
  const text = reason.trim()
  if (!text || reason.length > LIMITS.reportReasonLength)
    throw badInput(`reason must be 1..${LIMITS.reportReasonLength} characters and not only spaces`, 'reason')
  return transact(app, async (tx) => {
    const [message] = await findVisibleMessages(tx, viewer, [key])
    if (!message) throw notFound('Message')
    await insertReport(tx, key, viewer.userId, reason)
    return { result: true, events: [] }
  })
}

const REPORT_CURSOR = keysetCursor('report', ['id'])

/** Query.reports: operators only, open (or resolved) reports, newest first. */
export async function reports(
  app: App,
  viewer: Viewer,
  args: { first?: number | null; after?: string | null; resolved?: boolean | null },
): Promise<Connection<ReportRecord>> {
  requireOperator(viewer, 'read reports')
  const limit = pageSize(args.first, 'first')
  const after = REPORT_CURSOR.decode(args.after, 'after')
  const rows = await listReports(readerOf(app, viewer), args.resolved ?? false, after?.[0] ?? null, limit + 1)
  return forwardPage(rows, limit, (r) => REPORT_CURSOR.encode(r.id), after !== null)
}

/** resolveReport: operators only; resolving twice keeps the first resolution; audited. */
export async function resolveReport(app: App, viewer: Viewer, id: string): Promise<ReportRecord> {
  requireOperator(viewer, 'resolve reports')
  const key = parseReportId(id)
  return transact(app, async (tx) => {
    const report = await storeResolveReport(tx, key, viewer.userId)
    if (!report) throw notFound('Report')
    await recordAudit(tx, viewer, 'report.resolve', id)
    return { result: report, events: [] }
  })
}

/** node(id) of a Report: operators only; anyone else is told it does not exist. */
export async function requireReport(app: App, viewer: Viewer, id: string): Promise<ReportRecord> {
  const report = viewer.isOperator ? await findReport(readerOf(app, viewer), parseReportId(id)) : null
  return report ?? Promise.reject(notFound('Report'))
}
