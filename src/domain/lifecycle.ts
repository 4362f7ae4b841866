import type { Tx } from '../db/client.ts'
import { DomainError, badInput, forbidden, notFound } from '../errors.ts'
import { parseMessageId, type MessageKey } from '../ids.ts'
import type { MessageEventKind } from '../realtime/events.ts'
import { isBlockedByPeer } from '../store/blocks.ts'
import { markRecalled, replaceContent } from '../store/lifecycle.ts'
import { findVisibleMessages } from '../store/messages.ts'
import type { MessageRecord } from '../store/records.ts'
import { accessConversation } from './access.ts'
import { transact, type App, type Outcome, type Viewer } from './app.ts'
import { readableText, validateContent, type ContentInput } from './content.ts'
import { canManage } from './conversations.ts'
import { messageDocument } from './searchIndex.ts'
import { checkSender, checkSensitiveWords } from './sendRules.ts'

/** The message if the viewer may see it (the shared visibility rule), else NOT_FOUND. */
export async function requireVisibleMessage(tx: Tx, viewer: Viewer, key: MessageKey): Promise<MessageRecord> {
  const [message] = await findVisibleMessages(tx, viewer, [key])
  if (!message) throw notFound('Message')
  return message
}

const isSender = (message: MessageRecord, viewer: Viewer) => message.senderType !== 'SYSTEM' && message.senderId === viewer.userId

export const messageRecalled = () => new DomainError('MESSAGE_RECALLED', 'the message was recalled')

const changed = (message: MessageRecord, kind: MessageEventKind): Outcome<MessageRecord> => ({
  result: message,
  events: [{ type: 'message', kind, conversationId: message.conversationId, seq: message.seq, pts: message.pts }],
})

/**
 * The sender replaces the text of a TEXT message that is not recalled. The earlier version is kept
 * (Message.edits) and the message takes the conversation's next pts, under its row lock, so an edit
 * and a recall of one message are serialized and a recalled message is never edited. An edit passes
 * the rules a send passes (mute, block, channel posting, word filter), else it would get round them.
 */
export async function editMessage(app: App, viewer: Viewer, messageId: string, input: ContentInput): Promise<MessageRecord> {
  const key = parseMessageId(messageId)
  const { kind, content } = validateContent(input)
  return transact(app, async (tx) => {
    const access = await accessConversation(tx, viewer, key.conversationId, { lock: true })
    const message = await requireVisibleMessage(tx, viewer, key)
    if (!isSender(message, viewer)) throw forbidden('only the sender can edit a message')
    if (message.status === 'RECALLED') throw messageRecalled()
    if (message.kind !== 'TEXT') throw new DomainError('NOT_EDITABLE', `a ${message.kind} message cannot be edited; only TEXT can`)
    if (kind !== 'TEXT') throw badInput('an edit keeps the kind: pass text content', 'content')
    const blockedByPeer = access.conversation.type === 'PRIVATE' && (await isBlockedByPeer(tx, key.conversationId, viewer.userId))
    checkSender(viewer, access, { mentionAll: false, now: new Date(), blockedByPeer })
    checkSensitiveWords(app.settings.sensitiveWords, readableText(kind, content))
    const searchDocument = app.settings.searchIndexing ? messageDocument(kind, content) : null
    const edited = await replaceContent(tx, key, { content, pts: access.conversation.lastPts + 1, searchDocument })
    // The lock makes this unreachable; it is the last guard should a recall ever skip the lock.
    if (!edited) throw messageRecalled()
    return changed(edited, 'EDITED')
  })
}

/**
 * Recall leaves a tombstone and takes the next pts. The sender may recall within
 * settings.recallWindowSeconds of sending; a group's OWNER or ADMIN may recall any member's
 * message at any time. SYSTEM messages cannot be recalled. Recalling a recalled message (by someone
 * who could have recalled it) returns the tombstone unchanged, so a retried recall succeeds.
 */
export async function recallMessage(app: App, viewer: Viewer, messageId: string): Promise<MessageRecord> {
  const key = parseMessageId(messageId)
  return transact(app, async (tx) => {
    const { conversation, member } = await accessConversation(tx, viewer, key.conversationId, { lock: true })
    const message = await requireVisibleMessage(tx, viewer, key)
    if (message.senderType === 'SYSTEM') throw forbidden('system messages cannot be recalled')
    const manager = conversation.type === 'GROUP' && canManage(member)
    if (!manager && !isSender(message, viewer)) throw forbidden('only the sender or a group owner or admin can recall a message')
    if (message.status === 'RECALLED') return { result: message, events: [] }
    const recalled = await markRecalled(tx, key, {
      pts: conversation.lastPts + 1,
      recalledById: viewer.userId,
      sentWithinSeconds: manager ? null : app.settings.recallWindowSeconds,
    })
    if (!recalled) {
      throw new DomainError('RECALL_WINDOW_EXPIRED', `a message can be recalled by its sender within ${app.settings.recallWindowSeconds} seconds of sending`)
    }
    return changed(recalled, 'RECALLED')
  })
}
