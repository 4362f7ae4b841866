import { listFriendRequests as storeFriendRequests, listFriends as storeFriends } from '../../store/friendships.ts'
import type { UserRecord } from '../../store/records.ts'
import type { App, Viewer } from '../core/app.ts'
import { keysetCursor } from '../core/cursors.ts'
import { pageSize } from '../core/input.ts'
import { forwardPage, type Connection } from '../core/paging.ts'

type Page = { first?: number | null; after?: string | null }

const FRIEND_CURSOR = keysetCursor('friends', ['text', 'text'])

/** Viewer.friends: by display name, then handle (the order searchUsers lists people in). */
export async function listFriends(app: App, viewer: Viewer, args: Page): Promise<Connection<UserRecord>> {
  const limit = pageSize(args.first, 'first')
  const position = FRIEND_CURSOR.decode(args.after, 'after')
  const after = position && { displayName: position[0], handle: position[1] }
  const rows = await storeFriends(app.db, viewer.userId, after, limit + 1)
  return forwardPage(rows, limit, (u) => FRIEND_CURSOR.encode(u.displayName, u.handle), after !== null)
}

const REQUEST_CURSOR = keysetCursor('friendRequests', ['time', 'id'])

/** Viewer.friendRequests: users who asked the viewer and wait for an answer, newest request first. */
export async function listFriendRequests(app: App, viewer: Viewer, args: Page): Promise<Connection<UserRecord>> {
  const limit = pageSize(args.first, 'first')
  const position = REQUEST_CURSOR.decode(args.after, 'after')
  const after = position && { requestedAt: position[0], userId: position[1] }
  const rows = await storeFriendRequests(app.db, viewer.userId, after, limit + 1)
  const page = forwardPage(rows, limit, (r) => REQUEST_CURSOR.encode(r.requestedAt, r.user.id), after !== null)
  return { ...page, edges: page.edges.map((e) => ({ cursor: e.cursor, node: e.node.user })) }
}
