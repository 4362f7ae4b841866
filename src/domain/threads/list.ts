import { listFollowedThreads } from '../../store/threads.ts'
import type { MessageRecord } from '../../store/records.ts'
import type { App, Viewer } from '../core/app.ts'
import { keysetCursor } from '../core/cursors.ts'
import { pageSize } from '../core/input.ts'
import { forwardPage, type Connection } from '../core/paging.ts'

/** Viewer.threads' cursors: the thread's last reply time and its root. */
const THREAD_CURSOR = keysetCursor('thread', ['time', 'id', 'int'])

type FollowedThread = MessageRecord & { lastReplyAt: Date }

/**
 * Viewer.threads: the threads the viewer follows in conversations they are in, latest reply first,
 * forward pages; `unreadOnly`: only those with a reply the viewer has not read. Nodes are the roots.
 */
export async function listThreads(
  app: App,
  viewer: Viewer,
  args: { first?: number | null; after?: string | null; unreadOnly?: boolean | null },
): Promise<Connection<FollowedThread>> {
  const limit = pageSize(args.first, 'first')
  const after = THREAD_CURSOR.decode(args.after, 'after')
  const rows = await listFollowedThreads(app.db, viewer, {
    after: after && { lastReplyAt: after[0], conversationId: after[1], seq: after[2] },
    limit: limit + 1,
    unreadOnly: args.unreadOnly ?? false,
  })
  return forwardPage(rows, limit, (t) => THREAD_CURSOR.encode(t.lastReplyAt, t.conversationId, t.seq), after !== null)
}
