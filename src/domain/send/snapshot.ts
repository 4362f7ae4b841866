import { badInput, notFound } from '../core/errors.ts'
import { type MessageKey } from '../core/ids.ts'
import { findVisibleMessages } from '../../store/messages.ts'
import { findConversationsForUser } from '../../store/conversations.ts'
import type { ForwardOriginRecord, MessageRecord } from '../../store/records.ts'
import type { Conn } from '../../store/sql.ts'
import { findUsersByIds } from '../../store/users.ts'
import type { Viewer } from '../core/app.ts'
import { LIMITS } from '../core/limits.ts'
import { refuseRecalled } from '../policy/policy.ts'
import { listNames } from './systemText.ts'
import {
  type ValidContent,
  type ContentDraft,
  type SnapshotContent,
  jsonBytes,
  type ForwardRequest,
  type ForwardedItemRecord,
} from './content.ts'

/** Content that copies other messages (merged forwards, forwards as themselves) takes its snapshot here, as the sender sees the sources. */

/** A send's content as it will be stored: merged forwards and copies take their snapshots (as the sender sees the sources). */
export async function snapshotContent(conn: Conn, viewer: Viewer, draft: ContentDraft): Promise<SnapshotContent> {
  if ('forward' in draft) return { ...(await snapshotForward(conn, viewer, draft.forward)), forwardedFrom: null }
  if ('copy' in draft) return snapshotCopy(conn, viewer, draft.copy)
  return { ...draft, forwardedFrom: null }
}

/**
 * A copy of one message (content.copy): its kind and content, and where it came from. The original
 * must be visible to the sender (NOT_FOUND), not recalled (MESSAGE_RECALLED) and not a SYSTEM notice
 * (BAD_USER_INPUT). A copy of a copy names the first original, as a forward chain should.
 */
async function snapshotCopy(conn: Conn, viewer: Viewer, key: MessageKey): Promise<SnapshotContent> {
  const [original] = await findVisibleMessages(conn, viewer, [key])
  if (!original) throw notFound('Copied message')
  refuseRecalled(original, 'forwarded')
  if (original.senderId === null) throw badInput('system notices cannot be forwarded', 'content.copy.messageId')
  const origin = original.forwardedFrom ?? (await originOf(conn, viewer, original))
  // Ranges name users of the original's conversation; the copy mentions no one.
  const { mentionRanges: _ranges, ...content } = original.content as Record<string, unknown>
  return { kind: original.kind, content, forwardedFrom: origin }
}

async function originOf(conn: Conn, viewer: Viewer, original: MessageRecord): Promise<ForwardOriginRecord> {
  const [[sender], [access]] = await Promise.all([
    findUsersByIds(conn, [original.senderId!]),
    findConversationsForUser(conn, [original.conversationId], viewer.userId),
  ])
  return {
    senderName: sender?.displayName ?? '',
    sentAt: original.sentAt.toISOString(),
    conversationTitle: access?.conversation.title ?? null,
  }
}

/**
 * Snapshots the sources of a merged forward as the sender sees them (the shared visibility rule):
 * every source must be visible to the sender, else NOT_FOUND; recalled ones are MESSAGE_RECALLED;
 * SYSTEM notices are not forwardable. Items are in the order they were sent.
 */
async function snapshotForward(conn: Conn, viewer: Viewer, request: ForwardRequest): Promise<ValidContent> {
  const found = await findVisibleMessages(conn, viewer, request.sources)
  if (found.length !== request.sources.length) throw notFound('Forwarded message')
  for (const m of found) refuseRecalled(m, 'forwarded')
  if (found.some((m) => m.senderId === null))
    throw badInput('system notices cannot be forwarded', 'content.forward.messageIds')
  const senders = new Map(
    (await findUsersByIds(conn, [...new Set(found.map((m) => m.senderId!))])).map((u) => [u.id, u.displayName]),
  )
  const items: ForwardedItemRecord[] = found.sort(bySending).map((m) => ({
    senderName: senders.get(m.senderId!) ?? '',
    kind: m.kind,
    content: m.content,
    sentAt: m.sentAt.toISOString(),
  }))
  const content = { title: request.title ?? defaultForwardTitle(items.map((i) => i.senderName)), items }
  if (jsonBytes(content) > LIMITS.forwardSnapshotBytes) {
    throw badInput(
      `the forwarded messages are larger than ${LIMITS.forwardSnapshotBytes} bytes together`,
      'content.forward.messageIds',
    )
  }
  return { kind: 'FORWARD', content }
}

const bySending = (a: MessageRecord, b: MessageRecord) =>
  a.sentAt.getTime() - b.sentAt.getTime() || a.conversationId - b.conversationId || a.seq - b.seq

/** "Chat history of Alice", "… of Alice and Bob", "… of Alice, Bob and 3 others" (distinct senders, in order). */
function defaultForwardTitle(senderNames: string[]): string {
  const title = `Chat history of ${listNames(senderNames)}`
  return title.length <= LIMITS.forwardTitleLength ? title : `${title.slice(0, LIMITS.forwardTitleLength - 1)}…`
}
