import { auditLog, reportMessage, reports, resolveReport } from '../domain/governance/index.ts'
import type { AuditEntryRecord, ReportRecord } from '../store/governance.ts'
import { builder } from './builder.ts'
import { MessageRef } from './message.ts'
import { UserRef } from './user.ts'

const ReportRef = builder.objectRef<ReportRecord>('Report')
builder.node(ReportRef, {
  id: { resolve: (r) => `${r.conversationId}:${r.id}` },
  isTypeOf: (v) => typeof v === 'object' && v !== null && 'reporterId' in v,
  fields: (t) => ({
    message: t.field({ type: MessageRef, resolve: (r) => r.message }),
    reporter: t.field({ type: UserRef, resolve: async (r, _a, ctx) => (await ctx.loaders.users.load(r.reporterId))! }),
    reason: t.exposeString('reason'),
    createdAt: t.field({ type: 'DateTime', resolve: (r) => r.createdAt }),
    resolvedAt: t.field({ type: 'DateTime', nullable: true, resolve: (r) => r.resolvedAt }),
    resolvedBy: t.field({
      type: UserRef,
      nullable: true,
      resolve: (r, _a, ctx) => (r.resolvedById === null ? null : ctx.loaders.users.load(r.resolvedById)),
    }),
  }),
})
const ReportEdge = builder.edgeObject({ type: ReportRef, name: 'ReportEdge' })
const ReportConnection = builder.connectionObject({ type: ReportRef, name: 'ReportConnection' }, ReportEdge)

const AuditEntryRef = builder.objectRef<AuditEntryRecord>('AuditEntry')
builder.node(AuditEntryRef, {
  id: { resolve: (e) => e.id },
  isTypeOf: (v) => typeof v === 'object' && v !== null && 'actorId' in v && 'action' in v,
  fields: (t) => ({
    actor: t.field({ type: UserRef, resolve: async (e, _a, ctx) => (await ctx.loaders.users.load(e.actorId))! }),
    action: t.exposeString('action'),
    targetId: t.field({ type: 'ID', nullable: true, resolve: (e) => e.targetId }),
    detail: t.field({ type: 'JSON', nullable: true, resolve: (e) => e.detail }),
    at: t.field({ type: 'DateTime', resolve: (e) => e.at }),
  }),
})
const AuditEntryEdge = builder.edgeObject({ type: AuditEntryRef, name: 'AuditEntryEdge' })
const AuditEntryConnection = builder.connectionObject(
  { type: AuditEntryRef, name: 'AuditEntryConnection' },
  AuditEntryEdge,
)

builder.queryFields((t) => ({
  reports: t.withAuth({ operator: true }).field({
    type: ReportConnection,
    description: 'Operators only: reports of messages, newest first (open ones unless resolved: true)',
    args: { first: t.arg.int(), after: t.arg.string(), resolved: t.arg.boolean({ defaultValue: false }) },
    resolve: (_r, args, ctx) => reports(ctx.app, ctx.viewer, args),
  }),
  auditLog: t.withAuth({ operator: true }).field({
    type: AuditEntryConnection,
    description: 'Operators only: what operators read and did, newest first',
    args: { first: t.arg.int(), after: t.arg.string(), actorId: t.arg.id(), action: t.arg.string() },
    resolve: (_r, args, ctx) => auditLog(ctx.app, ctx.viewer, args),
  }),
}))

builder.mutationFields((t) => ({
  reportMessage: t.withAuth({ authenticated: true }).boolean({
    description: 'Anyone who can see the message; reason 1..500; one open report per reporter and message',
    args: { messageId: t.arg.id({ required: true }), reason: t.arg.string({ required: true }) },
    resolve: (_r, args, ctx) => reportMessage(ctx.app, ctx.viewer, args.messageId, args.reason),
  }),
  resolveReport: t.withAuth({ operator: true }).field({
    type: ReportRef,
    description: 'Operators only',
    args: { id: t.arg.id({ required: true }) },
    resolve: (_r, { id }, ctx) => resolveReport(ctx.app, ctx.viewer, id),
  }),
}))
