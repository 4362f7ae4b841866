// Governance and moderation: the audit trail of operator reads and actions, members' reports,
// deactivation, takedowns, retention and legal hold.
export { auditLog, requireAuditEntry } from './audit.ts'
export { exportConversation } from './export.ts'
export { reportMessage, reports, requireReport, resolveReport } from './reports.ts'
export { AccountWatch, type AccountsApp } from './accountWatch.ts'
export { setUserDeactivated } from './deactivation.ts'
export { removeMessage } from './removal.ts'
export { setLegalHold, setRetention } from './conversationRules.ts'
export { startRetentionSweeper, sweepRetention } from './retention.ts'
