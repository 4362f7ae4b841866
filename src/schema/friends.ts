import {
  listFriendRequests,
  listFriends,
  removeFriend,
  requestFriendship,
  respondToFriendship,
} from '../domain/friends/index.ts'
import type { EventPayload } from '../domain/live/index.ts'
import { builder } from './builder.ts'
import { UserConnection, UserRef } from './user.ts'
import { ViewerRef } from './viewer.ts'

/** Friendship (issue 46, decision 0275): the seeds' rule for private chats under PRIVATE_CHAT_POLICY=friends. */

const FriendshipStateEnum = builder.enumType('FriendshipState', {
  values: ['NONE', 'REQUESTED_BY_VIEWER', 'REQUESTED_BY_THEM', 'FRIENDS'] as const,
})

export const FriendshipEventRef = builder
  .objectRef<Extract<EventPayload, { typename: 'FriendshipEvent' }>>('FriendshipEvent')
  .implement({
    description: "The viewer's friendship with `user` changed (both users get one); `state` as the viewer sees it",
    fields: (t) => ({
      user: t.field({ type: UserRef, resolve: async (e, _a, ctx) => (await ctx.loaders.users.load(e.userId))! }),
      state: t.expose('state', { type: FriendshipStateEnum }),
    }),
  })

builder.objectField(UserRef, 'viewerFriendship', (t) =>
  t.field({
    type: FriendshipStateEnum,
    resolve: (u, _a, ctx) => ctx.loaders.friendships.load(u.id),
  }),
)

builder.objectFields(ViewerRef, (t) => ({
  friends: t.field({
    type: UserConnection,
    description: 'By display name',
    args: { first: t.arg.int(), after: t.arg.string() },
    resolve: (v, args, ctx) => listFriends(ctx.app, v, args),
  }),
  friendRequests: t.field({
    type: UserConnection,
    description: 'Users who asked the viewer and wait for an answer, newest first',
    args: { first: t.arg.int(), after: t.arg.string() },
    resolve: (v, args, ctx) => listFriendRequests(ctx.app, v, args),
  }),
}))

builder.mutationFields((t) => {
  const authed = t.withAuth({ authenticated: true })
  const userId = { userId: t.arg.id({ required: true }) }
  return {
    requestFriendship: authed.field({
      type: FriendshipStateEnum,
      description:
        'Asking someone who already asked you makes you friends (their PRIVATE conversation gets a FRIEND_ADDED message). Blocked either way: BLOCKED; 100 requests waiting already: LIMIT_REACHED',
      args: userId,
      resolve: (_r, args, ctx) => requestFriendship(ctx.app, ctx.viewer, args.userId),
    }),
    respondToFriendship: authed.field({
      type: FriendshipStateEnum,
      description: 'Accept (FRIENDS) or decline (NONE) a request; no request from that user: NOT_FOUND',
      args: { ...userId, accept: t.arg.boolean({ required: true }) },
      resolve: (_r, args, ctx) => respondToFriendship(ctx.app, ctx.viewer, args.userId, args.accept),
    }),
    removeFriend: authed.field({
      type: FriendshipStateEnum,
      description:
        'Ends a friendship or a pending request either way (NONE); the private conversation and its history stay',
      args: userId,
      resolve: (_r, args, ctx) => removeFriend(ctx.app, ctx.viewer, args.userId),
    }),
  }
})
