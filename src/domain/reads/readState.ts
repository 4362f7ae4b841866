import { notFound } from '../core/errors.ts'
import { parseId, type MessageKey } from '../core/ids.ts'
import { findMember } from '../../store/members.ts'
import { advanceReadPosition, countUnreadTotal, listReceiptReaders } from '../../store/reads.ts'
import type { ConversationType, MemberRecord, MessageRecord, UserRecord } from '../../store/records.ts'
import type { RealtimeEvent } from '../../realtime/events.ts'
import { accessConversation } from '../policy/access.ts'
import { settingsAfterRead } from '../members/conversationSettings.ts'
import { type App, type Viewer } from '../core/app.ts'
import { transact } from '../core/transact.ts'
import { keysetCursor } from '../core/cursors.ts'
import { optionalPosition, pageSize } from '../core/input.ts'
import { forwardPage, type Connection } from '../core/paging.ts'
import type { Settings } from '../core/settings.ts'

/**
 * Whether other members may learn a reader's position in a conversation of this type. Channels never
 * show receipts (a broadcast audience); positions are kept there too, for the reader's own counts.
 */
export function receiptsVisible(settings: Settings, type: ConversationType): boolean {
  if (type === 'PRIVATE') return settings.readReceipts.private
  if (type === 'GROUP') return settings.readReceipts.group
  return false
}

/**
 * Moves the viewer's read position to `seq` (default: the newest message), clamped to lastSeq. It
 * never moves backwards: an older seq is a silent no-op that publishes nothing. The ReadEvent says
 * whether receipts are visible, so that with receipts off only the reader's own devices get it.
 * Reading also clears the viewer's markedUnread (conversationSettings.ts).
 */
export async function markConversationRead(
  app: App,
  viewer: Viewer,
  conversationId: string,
  seq?: number | null,
): Promise<MemberRecord> {
  const id = parseId(conversationId, 'Conversation')
  const upTo = optionalPosition(seq, 'seq')
  return transact(app, async (tx) => {
    // No conversation lock: the conditional UPDATE alone keeps concurrent reads monotonic.
    const { conversation, member } = await accessConversation(tx, viewer, id, { lock: false })
    const target = Math.min(upTo ?? conversation.lastSeq, conversation.lastSeq)
    // The member row before the settings row, the order a send takes them in: one user's read and
    // send never wait for each other in a deadlock (transact would retry, after deadlock_timeout).
    const moved = target > member.lastReadSeq ? await advanceReadPosition(tx, id, viewer.userId, target) : null
    const settingsEvents = await settingsAfterRead(tx, viewer, id)
    if (target <= member.lastReadSeq) return { result: member, events: settingsEvents }
    if (!moved) {
      // A concurrent call moved it further first; this statement sees that commit.
      const current = await findMember(tx, id, viewer.userId)
      if (!current) throw notFound('Conversation')
      return { result: current, events: settingsEvents }
    }
    const read: RealtimeEvent = {
      type: 'read',
      conversationId: id,
      userId: viewer.userId,
      lastReadSeq: moved.lastReadSeq,
      receiptsVisible: receiptsVisible(app.settings, conversation.type),
    }
    return { result: { ...member, ...moved }, events: [read, ...settingsEvents] }
  })
}

export async function unreadTotal(app: App, viewer: Viewer): Promise<number> {
  return countUnreadTotal(app.db, viewer)
}

/** A receipt on one of the viewer's own messages. */
export type Receipt = MessageKey & { senderId: number; type: 'PRIVATE' | 'GROUP' }

/** The viewer sees a receipt only on their own messages, and only where receipts are switched on. */
export function receiptOf(
  settings: Settings,
  viewer: Viewer,
  message: MessageRecord,
  type: ConversationType,
): Receipt | null {
  if (message.senderType === 'SYSTEM' || message.senderId !== viewer.userId) return null
  if (type === 'CHANNEL' || !receiptsVisible(settings, type)) return null
  return { conversationId: message.conversationId, seq: message.seq, senderId: viewer.userId, type }
}

const READER_CURSOR = keysetCursor('reader', ['int'])

/** MessageReceipt.readers: the audience that has (read: true) or has not yet read the message, by user id. */
export async function listReaders(
  app: App,
  receipt: Receipt,
  args: { read?: boolean | null; first?: number | null; after?: string | null },
): Promise<Connection<UserRecord>> {
  const limit = pageSize(args.first, 'first')
  const after = READER_CURSOR.decode(args.after, 'after')
  const rows = await listReceiptReaders(app.db, receipt.senderId, receipt, {
    read: args.read ?? true,
    afterUserId: after?.[0] ?? 0,
    limit: limit + 1,
  })
  return forwardPage(rows, limit, (u) => READER_CURSOR.encode(u.id), after !== null)
}
