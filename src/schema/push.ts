import { registerPushDevice, tokenSuffix, unregisterPushDevice, viewerPushDevices } from '../domain/push/index.ts'
import type { PushDeviceRecord } from '../store/pushDevices.ts'
import { builder } from './builder.ts'
import { ViewerRef } from './viewer.ts'

/** Push devices (issue 43, docs/push.md). */

const PushPlatformEnum = builder.enumType('PushPlatform', {
  description: "Gorush's platforms 1, 2 and 3",
  values: ['APNS', 'FCM', 'HUAWEI'] as const,
})

const PushDeviceRef = builder.objectRef<PushDeviceRecord>('PushDevice')

builder.node(PushDeviceRef, {
  id: { resolve: (d) => d.id },
  isTypeOf: (v) => typeof v === 'object' && v !== null && 'platform' in v && 'token' in v,
  fields: (t) => ({
    platform: t.field({ type: PushPlatformEnum, resolve: (d) => d.platform }),
    tokenSuffix: t.string({ description: "The token's last characters", resolve: (d) => tokenSuffix(d.token) }),
    appId: t.exposeString('appId', { nullable: true }),
    createdAt: t.field({ type: 'DateTime', resolve: (d) => d.createdAt }),
    lastNotifiedAt: t.field({ type: 'DateTime', nullable: true, resolve: (d) => d.lastNotifiedAt }),
  }),
})

builder.objectField(ViewerRef, 'pushDevices', (t) =>
  t.field({ type: [PushDeviceRef], resolve: (v, _a, ctx) => viewerPushDevices(ctx.app, v) }),
)

builder.mutationFields((t) => {
  const authed = t.withAuth({ authenticated: true })
  return {
    registerPushDevice: authed.field({
      type: PushDeviceRef,
      description:
        'Idempotent per (platform, token); a token registered by another user moves to you. At most 20 devices a user',
      args: {
        platform: t.arg({ type: PushPlatformEnum, required: true }),
        token: t.arg.string({ required: true }),
        appId: t.arg.string(),
      },
      resolve: (_r, args, ctx) => registerPushDevice(ctx.app, ctx.viewer, args),
    }),
    unregisterPushDevice: authed.field({
      type: 'Boolean',
      description: 'False when the id names no device of yours',
      args: { id: t.arg.id({ required: true }) },
      resolve: (_r, { id }, ctx) => unregisterPushDevice(ctx.app, ctx.viewer, String(id)),
    }),
  }
})
