import type { MessageKey } from '../domain/core/ids.ts'
import { MESSAGE_COLUMNS } from './fragments.ts'
import { toMessage, type MessageRecord, type MessageRow } from './records.ts'
import { Prisma, type Conn } from './sql.ts'

/**
 * The audit trail and members' reports (issue 45). Both page newest first by id, which grows with
 * time: an entry or a report is written once and only a report's resolution changes afterwards.
 */

export type AuditEntryRecord = {
  id: number
  actorId: number
  action: string
  targetId: string | null
  detail: unknown
  at: Date
}

/** A report with the message as stored (operators see it whatever its visibility). */
export type ReportRecord = MessageKey & {
  id: number
  reporterId: number
  reason: string
  createdAt: Date
  resolvedAt: Date | null
  resolvedById: number | null
  message: MessageRecord
}

type AuditRow = Omit<AuditEntryRecord, 'id' | 'actorId'> & { id: bigint; actorId: bigint }
type ReportRow = MessageRow & {
  reportId: bigint
  reporterId: bigint
  reason: string
  reportedAt: Date
  resolvedAt: Date | null
  resolvedById: bigint | null
}

const toAuditEntry = (r: AuditRow): AuditEntryRecord => ({ ...r, id: Number(r.id), actorId: Number(r.actorId) })
function toReport(r: ReportRow): ReportRecord {
  const message = toMessage(r)
  return {
    conversationId: message.conversationId,
    seq: message.seq,
    id: Number(r.reportId),
    reporterId: Number(r.reporterId),
    reason: r.reason,
    createdAt: r.reportedAt,
    resolvedAt: r.resolvedAt,
    resolvedById: r.resolvedById === null ? null : Number(r.resolvedById),
    message,
  }
}

const AUDIT_COLUMNS = Prisma.sql`id, actor_id AS "actorId", action, target_id AS "targetId", detail, at`
const REPORT_COLUMNS = Prisma.sql`${MESSAGE_COLUMNS}, r.id AS "reportId", r.reporter_id AS "reporterId", r.reason,
  r.created_at AS "reportedAt", r.resolved_at AS "resolvedAt", r.resolved_by_id AS "resolvedById"`

export async function insertAuditEntry(
  conn: Conn,
  entry: { actorId: number; action: string; targetId: string | null; detail: unknown },
): Promise<void> {
  await conn.$executeRaw`INSERT INTO audit_entries (actor_id, action, target_id, detail)
    VALUES (${entry.actorId}, ${entry.action}, ${entry.targetId}, ${JSON.stringify(entry.detail ?? null)}::jsonb)`
}

/** Entries before `beforeId` (all when null), newest first, optionally of one actor and one action. */
export async function listAuditEntries(
  conn: Conn,
  filter: { actorId: number | null; action: string | null },
  beforeId: number | null,
  limit: number,
): Promise<AuditEntryRecord[]> {
  const rows = await conn.$queryRaw<AuditRow[]>`
    SELECT ${AUDIT_COLUMNS} FROM audit_entries
    WHERE (${filter.actorId}::bigint IS NULL OR actor_id = ${filter.actorId})
      AND (${filter.action}::text IS NULL OR action = ${filter.action})
      AND (${beforeId}::bigint IS NULL OR id < ${beforeId})
    ORDER BY id DESC LIMIT ${limit}`
  return rows.map(toAuditEntry)
}

/** A report, unless the reporter already has an open one of this message (then nothing is written). */
export async function insertReport(conn: Conn, key: MessageKey, reporterId: number, reason: string): Promise<void> {
  await conn.$executeRaw`INSERT INTO message_reports (conversation_id, seq, reporter_id, reason)
    VALUES (${key.conversationId}, ${key.seq}, ${reporterId}, ${reason})
    ON CONFLICT (conversation_id, seq, reporter_id) WHERE resolved_at IS NULL DO NOTHING`
}

/** Open (or resolved) reports before `beforeId`, newest first. */
export async function listReports(
  conn: Conn,
  resolved: boolean,
  beforeId: number | null,
  limit: number,
): Promise<ReportRecord[]> {
  const rows = await conn.$queryRaw<ReportRow[]>`
    SELECT ${REPORT_COLUMNS}
    FROM message_reports r JOIN messages m ON m.conversation_id = r.conversation_id AND m.seq = r.seq
    WHERE (r.resolved_at IS NOT NULL) = ${resolved} AND (${beforeId}::bigint IS NULL OR r.id < ${beforeId})
    ORDER BY r.id DESC LIMIT ${limit}`
  return rows.map(toReport)
}

/** Marks a report resolved (once: a resolved report keeps its first resolution); null when there is none. */
export async function resolveReport(
  conn: Conn,
  key: { conversationId: number; id: number },
  resolverId: number,
): Promise<ReportRecord | null> {
  const rows = await conn.$queryRaw<ReportRow[]>`
    WITH r AS (
      UPDATE message_reports
      SET resolved_at = coalesce(resolved_at, now()), resolved_by_id = coalesce(resolved_by_id, ${resolverId})
      WHERE conversation_id = ${key.conversationId} AND id = ${key.id}
      RETURNING *)
    SELECT ${REPORT_COLUMNS} FROM r JOIN messages m ON m.conversation_id = r.conversation_id AND m.seq = r.seq`
  return rows[0] ? toReport(rows[0]) : null
}

export async function findReport(
  conn: Conn,
  key: { conversationId: number; id: number },
): Promise<ReportRecord | null> {
  const rows = await conn.$queryRaw<ReportRow[]>`
    SELECT ${REPORT_COLUMNS}
    FROM message_reports r JOIN messages m ON m.conversation_id = r.conversation_id AND m.seq = r.seq
    WHERE r.conversation_id = ${key.conversationId} AND r.id = ${key.id}`
  return rows[0] ? toReport(rows[0]) : null
}

export async function findAuditEntry(conn: Conn, id: number): Promise<AuditEntryRecord | null> {
  const rows = await conn.$queryRaw<AuditRow[]>`SELECT ${AUDIT_COLUMNS} FROM audit_entries WHERE id = ${id}`
  return rows[0] ? toAuditEntry(rows[0]) : null
}
