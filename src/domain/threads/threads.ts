import { notFound } from '../core/errors.ts'
import { parseMessageId, type MessageKey } from '../core/ids.ts'
import { findVisibleMessages } from '../../store/messages.ts'
import type { MessageRecord } from '../../store/records.ts'
import type { Conn } from '../../store/sql.ts'
import {
  advanceThreadRead,
  findLastReplySeq,
  setFollowing,
  type ThreadStateChange,
  type ThreadSummaryRecord,
} from '../../store/threads.ts'
import type { RealtimeEvent } from '../../realtime/events.ts'
import type { App, Viewer } from '../core/app.ts'
import { optionalPosition } from '../core/input.ts'
import { transact } from '../core/transact.ts'
import type { Loaders } from '../history/loaders.ts'

/**
 * A thread's root by a message id the viewer may see: the message itself when top-level, its root
 * when it is a reply (visible too). NOT_FOUND otherwise, as for a message of a conversation the
 * viewer is not in.
 */
async function findRoot(conn: Conn, viewer: Viewer, key: MessageKey): Promise<MessageRecord> {
  const [message] = await findVisibleMessages(conn, viewer, [key])
  if (!message) throw notFound('Message')
  if (message.threadRootSeq === null) return message
  const [root] = await findVisibleMessages(conn, viewer, [
    { conversationId: key.conversationId, seq: message.threadRootSeq },
  ])
  if (!root) throw notFound('Message')
  return root
}

/**
 * A change of the viewer's thread state goes to their other devices as their own change of the
 * conversation: the account stream then reads it from the sync difference (docs/threads.md).
 */
const stateChanged = (viewer: Viewer, root: MessageKey, change: ThreadStateChange): RealtimeEvent[] =>
  change.changed ? [{ type: 'conversationUpdated', userId: viewer.userId, conversationId: root.conversationId }] : []

/** followThread: follow (or stop following) the thread of a root the viewer may see; returns the root. */
export function followThread(app: App, viewer: Viewer, messageId: string, follow: boolean): Promise<MessageRecord> {
  const key = parseMessageId(messageId)
  return transact(app, async (tx) => {
    const root = await findRoot(tx, viewer, key)
    const change = await setFollowing(tx, root, viewer.userId, follow)
    return { result: root, events: stateChanged(viewer, root, change) }
  })
}

/**
 * markThreadRead: moves the viewer's read position in the thread to `seq` (default: its latest
 * reply; never past it), never backwards. Returns the root.
 */
export function markThreadRead(
  app: App,
  viewer: Viewer,
  messageId: string,
  seq?: number | null,
): Promise<MessageRecord> {
  const key = parseMessageId(messageId)
  const upTo = optionalPosition(seq, 'seq')
  return transact(app, async (tx) => {
    const root = await findRoot(tx, viewer, key)
    const last = await findLastReplySeq(tx, root)
    const target = Math.min(upTo ?? last, last)
    if (target <= 0) return { result: root, events: [] }
    const change = await advanceThreadRead(tx, root, viewer.userId, target)
    return { result: root, events: stateChanged(viewer, root, change) }
  })
}

/** Message.thread: the summary of a root's thread for the viewer, null without a reply the viewer may see. */
export async function loadThreadSummary(loaders: Loaders, message: MessageRecord): Promise<ThreadSummaryRecord | null> {
  if (message.threadRootSeq !== null) return null
  return loaders.threadSummaries.load(message)
}
