import { completeUpload, createUpload, mediaUrl, snapshotOf, type AttachmentSnapshot } from '../domain/files/index.ts'
import { encodeGlobalId } from '../domain/core/index.ts'
import { builder } from './builder.ts'
import { viewerOf, type Context } from './context.ts'
import { UserRef } from './user.ts'

const AttachmentKindEnum = builder.enumType('AttachmentKind', {
  values: ['IMAGE', 'AUDIO', 'VIDEO', 'FILE'] as const,
})

/** Signed for the viewer who reads it (domain/files/app.ts mediaUrl). */
export const attachmentUrl = (a: Pick<AttachmentSnapshot, 'attachmentId'>, ctx: Context, variant: 'a' | 't') =>
  mediaUrl(ctx.app, ctx.origin, viewerOf(ctx).userId, a.attachmentId, variant)

export const AttachmentRef = builder.objectRef<AttachmentSnapshot>('Attachment')
builder.node(AttachmentRef, {
  id: { resolve: (a) => a.attachmentId },
  isTypeOf: (v) => typeof v === 'object' && v !== null && 'attachmentId' in v && 'sha256' in v,
  fields: (t) => ({
    kind: t.field({ type: AttachmentKindEnum, resolve: (a) => a.kind }),
    name: t.exposeString('name'),
    mimeType: t.exposeString('mimeType'),
    sizeBytes: t.field({ type: 'SafeInt', resolve: (a) => a.sizeBytes }),
    sha256: t.exposeString('sha256'),
    width: t.int({ nullable: true, resolve: (a) => a.width ?? null }),
    height: t.int({ nullable: true, resolve: (a) => a.height ?? null }),
    durationMs: t.int({ nullable: true, resolve: (a) => a.durationMs ?? null }),
    url: t.string({ resolve: (a, _args, ctx) => attachmentUrl(a, ctx, 'a') }),
    thumbnailUrl: t.string({
      nullable: true,
      resolve: (a, _args, ctx) => (a.hasThumbnail ? attachmentUrl(a, ctx, 't') : null),
    }),
    uploadedBy: t.field({
      type: UserRef,
      resolve: (a, _args, ctx) => ctx.loaders.users.load(a.uploaderId).then((u) => u!),
    }),
    createdAt: t.field({ type: 'DateTime', resolve: (a) => new Date(a.createdAt) }),
  }),
})

const CreateUploadInput = builder.inputType('CreateUploadInput', {
  fields: (t) => ({
    name: t.string({ required: true }),
    sizeBytes: t.field({ type: 'SafeInt', required: true }),
    mimeType: t.string({ required: true }),
    kind: t.field({ type: AttachmentKindEnum, required: true }),
    durationMs: t.int(),
  }),
})

type SlotShape = Awaited<ReturnType<typeof createUpload>>
const UploadSlotRef = builder.objectRef<SlotShape>('UploadSlot').implement({
  fields: (t) => ({
    uploadId: t.id({ resolve: (s) => encodeGlobalId('Upload', s.uploadId) }),
    url: t.exposeString('url', { description: 'PUT the exact bytes here' }),
    method: t.exposeString('method'),
    headers: t.field({ type: 'JSON', description: 'Headers the PUT must carry', resolve: (s) => s.headers }),
    expiresAt: t.field({ type: 'DateTime', resolve: (s) => s.expiresAt }),
  }),
})

builder.mutationFields((t) => {
  const authed = t.withAuth({ authenticated: true })
  return {
    createUpload: authed.field({
      type: UploadSlotRef,
      description: 'A slot for one upload: PUT the bytes to its url within the hour, then completeUpload',
      args: { input: t.arg({ type: CreateUploadInput, required: true }) },
      resolve: (_r, { input }, ctx) => createUpload(ctx.app, ctx.viewer, input, ctx.origin),
    }),
    completeUpload: authed.field({
      type: AttachmentRef,
      description:
        "Checks the uploaded bytes and keeps them as an attachment; the uploader's own only (else NOT_FOUND)",
      args: { uploadId: t.arg.id({ required: true }) },
      resolve: async (_r, { uploadId }, ctx) => snapshotOf(await completeUpload(ctx.app, ctx.viewer, uploadId)),
    }),
  }
})
