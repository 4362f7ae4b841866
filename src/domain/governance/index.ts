// Governance and moderation: the audit trail of operator reads and actions, and members' reports.
export { auditLog, requireAuditEntry } from './audit.ts'
export { exportConversation } from './export.ts'
export { reportMessage, reports, requireReport, resolveReport } from './reports.ts'
