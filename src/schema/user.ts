import { upsertUsers } from '../domain/members/index.ts'
import type { UserRecord } from '../store/records.ts'
import { builder } from './builder.ts'
import { UserKindEnum } from './enums.ts'

export const UserRef = builder.objectRef<UserRecord>('User')

builder.node(UserRef, {
  id: { resolve: (u) => u.id },
  isTypeOf: (v) => typeof v === 'object' && v !== null && 'handle' in v,
  fields: (t) => ({
    handle: t.exposeString('handle', { description: "The host system's stable user key; JWT `sub` carries it" }),
    displayName: t.exposeString('displayName'),
    kind: t.field({ type: UserKindEnum, resolve: (u) => u.kind }),
    deactivated: t.exposeBoolean('deactivated', { description: 'An operator deactivated the user (deactivateUser)' }),
  }),
})

export const UserConnection = builder.connectionObject({ type: UserRef, name: 'UserConnection' })

const UserInput = builder.inputType('UserInput', {
  fields: (t) => ({
    handle: t.string({ required: true }),
    displayName: t.string({ required: true }),
    kind: t.field({ type: UserKindEnum, defaultValue: 'HUMAN' }),
  }),
})

builder.mutationField('upsertUsers', (t) =>
  t.withAuth({ operator: true }).field({
    type: [UserRef],
    description: 'Operators only: create or update users by handle',
    args: { users: t.arg({ type: [UserInput], required: true }) },
    resolve: (_root, { users }, ctx) => upsertUsers(ctx.app, ctx.viewer, users),
  }),
)
