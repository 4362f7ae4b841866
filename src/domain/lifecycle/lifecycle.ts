import type { Tx } from '../../db/client.ts'
import { DomainError, notFound } from '../core/errors.ts'
import { parseMessageId, type MessageKey } from '../core/ids.ts'
import type { MessageEventKind } from '../../realtime/events.ts'
import { isBlockedByPeer } from '../../store/blocks.ts'
import { findMember } from '../../store/members.ts'
import { findPeerOfPrivate } from '../../store/friendships.ts'
import { markRecalled, replaceContent } from '../../store/lifecycle.ts'
import { findVisibleMessages } from '../../store/messages.ts'
import type { MessageRecord } from '../../store/records.ts'
import { accessConversation } from '../policy/access.ts'
import { type App, type Viewer } from '../core/app.ts'
import { transact, type Committed } from '../core/transact.ts'
import { validateContent, type ContentInput } from '../send/content.ts'
import { readableText } from '../send/readableText.ts'
import {
  checkEdit,
  checkPrivateChat,
  checkSender,
  isRecalled,
  isSender,
  recallWindow,
  recalledError,
} from '../policy/policy.ts'
import { checkSensitiveWords } from '../send/wordFilter.ts'
import { checkReferences, rangeMentions } from '../send/references.ts'
import { messageDocument } from '../search/documents.ts'

/** The message if the viewer may see it (the shared visibility rule), else NOT_FOUND. */
export async function requireVisibleMessage(tx: Tx, viewer: Viewer, key: MessageKey): Promise<MessageRecord> {
  const [message] = await findVisibleMessages(tx, viewer, [key])
  if (!message) throw notFound('Message')
  return message
}

/** The outcome of a change that took a pts: the message as it is now, and its MessageEvent. */
export const changed = (
  message: MessageRecord,
  kind: MessageEventKind,
  actorId?: number,
): Committed<MessageRecord> => ({
  result: message,
  events: [
    { type: 'message', kind, conversationId: message.conversationId, seq: message.seq, pts: message.pts, actorId },
  ],
})

/**
 * The sender replaces the text of a TEXT message that is not recalled. The earlier version is kept
 * (Message.edits) and the message takes the conversation's next pts, under its row lock, so an edit
 * and a recall of one message are serialized and a recalled message is never edited. An edit passes
 * the rules a send passes (mute, block, channel posting, word filter), else it would get round them.
 */
export async function editMessage(
  app: App,
  viewer: Viewer,
  messageId: string,
  input: ContentInput,
): Promise<MessageRecord> {
  const key = parseMessageId(messageId)
  const { kind, content } = validateContent(input)
  return transact(app, async (tx) => {
    const access = await accessConversation(tx, viewer, key.conversationId, { lock: true })
    const message = await requireVisibleMessage(tx, viewer, key)
    checkEdit(viewer, message, kind)
    const blockedByPeer =
      access.conversation.type === 'PRIVATE' && (await isBlockedByPeer(tx, key.conversationId, viewer.userId))
    // The new text's ranges pass the checks a send's do: members only, @all for managers.
    const mentions = rangeMentions(content)
    checkSender(viewer, access, { mentionAll: mentions.all, now: new Date(), blockedByPeer })
    const peer =
      access.conversation.type === 'PRIVATE' && app.settings.privateChatPolicy === 'friends'
        ? await findPeerOfPrivate(tx, key.conversationId, viewer.userId)
        : null
    if (peer) checkPrivateChat(app.settings.privateChatPolicy, viewer, peer)
    await checkReferences(tx, viewer, key.conversationId, { userIds: mentions.userIds, quoted: null })
    checkSensitiveWords(app.settings.sensitiveWords, readableText(kind, content))
    const searchDocument = app.settings.searchIndexing ? messageDocument(kind, content) : null
    const edited = await replaceContent(tx, key, {
      content,
      pts: access.conversation.lastPts + 1,
      searchDocument,
      mentions,
    })
    // The lock makes this unreachable; it is the last guard should a recall ever skip the lock.
    if (!edited) throw recalledError()
    return changed(edited, 'EDITED')
  })
}

/**
 * Recall leaves a tombstone and takes the next pts. Who may, and within which window, is
 * policy.recallWindow (the sender within settings.recallWindowSeconds; a group manager at any time
 * for its own messages and those of members below it). Recalling a recalled message (by someone who
 * could have recalled it) returns the tombstone unchanged, so a retried recall succeeds.
 */
export async function recallMessage(app: App, viewer: Viewer, messageId: string): Promise<MessageRecord> {
  const key = parseMessageId(messageId)
  return transact(app, async (tx) => {
    const access = await accessConversation(tx, viewer, key.conversationId, { lock: true })
    const message = await requireVisibleMessage(tx, viewer, key)
    // Someone else's message: the policy compares the sender's role with the viewer's.
    const sender =
      message.senderId === null || isSender(message, viewer)
        ? null
        : await findMember(tx, key.conversationId, message.senderId)
    const window = recallWindow(viewer, access, message, sender?.role ?? null, app.settings.recallWindowSeconds)
    if (isRecalled(message)) return { result: message, events: [] }
    const recalled = await markRecalled(tx, key, {
      pts: access.conversation.lastPts + 1,
      recalledById: viewer.userId,
      sentWithinSeconds: window,
      // A legal hold keeps what a recall would erase (for operators; members see a tombstone).
      purge: !access.conversation.legalHold,
    })
    if (!recalled) {
      throw new DomainError(
        'RECALL_WINDOW_EXPIRED',
        `a message can be recalled by its sender within ${app.settings.recallWindowSeconds} seconds of sending`,
      )
    }
    return changed(recalled, 'RECALLED')
  })
}
