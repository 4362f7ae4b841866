import type { EventPayload } from '../domain/live/index.ts'
import { loadPresence, setPresenceVisible, viewerPresenceVisible, type Presence } from '../domain/presence/index.ts'
import { builder } from './builder.ts'
import { UserRef } from './user.ts'
import { ViewerRef } from './viewer.ts'

/** Presence (issue 43, docs/presence.md): online while holding a live subscription on any instance. */

const PresenceRef = builder.objectRef<Presence>('Presence').implement({
  fields: (t) => ({
    online: t.exposeBoolean('online', { description: 'A live subscription on any instance' }),
    lastSeenAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When the last live subscription closed; null while online (or never seen)',
      resolve: (p) => p.lastSeenAt,
    }),
  }),
})

export const PresenceEventRef = builder
  .objectRef<Extract<EventPayload, { typename: 'PresenceEvent' }>>('PresenceEvent')
  .implement({
    description: 'A PRIVATE-chat peer went online or offline (sent once the change held for a moment)',
    fields: (t) => ({
      user: t.field({ type: UserRef, resolve: async (e, _a, ctx) => (await ctx.loaders.users.load(e.userId))! }),
      online: t.exposeBoolean('online'),
      lastSeenAt: t.field({ type: 'DateTime', nullable: true, resolve: (e) => e.lastSeenAt }),
    }),
  })

builder.objectField(UserRef, 'presence', (t) =>
  t.field({
    type: PresenceRef,
    nullable: true,
    description: 'Null when the user hides it, and for users the viewer shares no conversation with',
    resolve: (u, _a, ctx) => (ctx.viewer ? loadPresence(ctx.app, ctx.viewer, ctx.loaders, u.id) : null),
  }),
)

builder.objectField(ViewerRef, 'presenceVisible', (t) =>
  t.boolean({
    description: 'True until setPresenceVisible(false)',
    resolve: (v, _a, ctx) => viewerPresenceVisible(ctx.app, v),
  }),
)

builder.mutationField('setPresenceVisible', (t) =>
  t.withAuth({ authenticated: true }).field({
    type: ViewerRef,
    description: 'false: User.presence is null for everyone and no PresenceEvent is sent; you still see others',
    args: { visible: t.arg.boolean({ required: true }) },
    resolve: (_r, { visible }, ctx) => setPresenceVisible(ctx.app, ctx.viewer, visible),
  }),
)
