import { DomainError, badInput, notFound } from '../errors.ts'
import { parseId, parseMessageId } from '../ids.ts'
import { countCurrentMembers } from '../store/conversations.ts'
import { appendMessages, findByClientMessageId, findVisibleMessages } from '../store/messages.ts'
import type { MessageRecord, SenderType } from '../store/records.ts'
import { isUniqueViolation } from '../store/sql.ts'
import { accessConversation } from './access.ts'
import { transact, type App, type Viewer } from './app.ts'
import { parseContent, readableText, snapshotForward, type ContentInput } from './content.ts'
import { LIMITS } from './limits.ts'
import { checkSender, checkSensitiveWords } from './sendRules.ts'

export type SendMessageInput = {
  conversationId: string
  clientMessageId: string
  content: ContentInput
  quotedMessageId?: string | null
  mentionUserIds?: readonly string[] | null
  mentionAll?: boolean | null
  visibleToUserIds?: readonly string[] | null
}

export type SendMessageResult = { message: MessageRecord; deduplicated: boolean }

function parseUserIds(ids: readonly string[] | null | undefined, field: string, max: number): number[] {
  if (!ids) return []
  if (ids.length > max) throw badInput(`${field} takes at most ${max} ids`, field)
  return [...new Set(ids.map((id) => parseId(id, 'User')))]
}

/**
 * Sends a message: idempotent per (conversation, sender, clientMessageId). A retry returns the
 * original with deduplicated: true. Layer one looks the key up before taking the conversation lock;
 * layer two is the unique constraint, for retries that race each other.
 */
export async function sendMessage(app: App, viewer: Viewer, input: SendMessageInput): Promise<SendMessageResult> {
  const conversationId = parseId(input.conversationId, 'Conversation')
  const clientMessageId = input.clientMessageId
  if (clientMessageId.length < 1 || clientMessageId.length > LIMITS.clientMessageIdLength) {
    throw badInput(`clientMessageId must be 1..${LIMITS.clientMessageIdLength} characters`, 'clientMessageId')
  }
  const draft = parseContent(input.content)
  const mentionAll = input.mentionAll ?? false
  const mentionUserIds = parseUserIds(input.mentionUserIds, 'mentionUserIds', LIMITS.mentionsPerMessage)
  const visibleTo = parseUserIds(input.visibleToUserIds, 'visibleToUserIds', LIMITS.visibleToPerMessage)
  // In a directed message, mentioning someone who cannot see it would only confuse them.
  if (visibleTo.length && mentionUserIds.some((id) => id !== viewer.userId && !visibleTo.includes(id))) {
    throw badInput('a directed message can mention only users it is directed to', 'mentionUserIds')
  }
  const quoted = input.quotedMessageId ? parseMessageId(input.quotedMessageId) : null
  if (quoted && quoted.conversationId !== conversationId) throw notFound('Quoted message')

  const senderType: SenderType = viewer.kind === 'AGENT' ? 'AGENT' : 'USER'
  const key = { conversationId, senderType, senderId: viewer.userId, clientMessageId }
  const retry = async (): Promise<SendMessageResult | null> => {
    const original = await findByClientMessageId(app.db, key)
    if (!original) return null
    await accessConversation(app.db, viewer, conversationId, { lock: false })
    return { message: original, deduplicated: true }
  }

  const earlier = await retry()
  if (earlier) return earlier
  try {
    return await transact(app, async (tx) => {
      // Every rule is checked before the append: a rejected send writes nothing and takes no seq.
      const access = await accessConversation(tx, viewer, conversationId, { lock: true })
      await checkSender(tx, viewer, access, { mentionAll, now: new Date() })
      const audience = [...new Set([...mentionUserIds, ...visibleTo])]
      if (audience.length && (await countCurrentMembers(tx, conversationId, audience)) !== audience.length) {
        throw badInput('mentioned and directed users must be members of the conversation', 'mentionUserIds')
      }
      if (quoted) {
        const [original] = await findVisibleMessages(tx, viewer, [quoted])
        if (!original) throw notFound('Quoted message')
        if (original.status === 'RECALLED') throw new DomainError('MESSAGE_RECALLED', 'a recalled message cannot be quoted')
      }
      const { kind, content } = 'forward' in draft ? await snapshotForward(tx, viewer, draft.forward) : draft
      checkSensitiveWords(app.settings.sensitiveWords, readableText(kind, content))
      const [message] = await appendMessages(tx, conversationId, access.conversation, [
        { senderType, senderId: viewer.userId, kind, clientMessageId, content, quotedSeq: quoted?.seq ?? null, mentionUserIds, mentionAll, visibleTo },
      ])
      return {
        result: { message: message!, deduplicated: false },
        events: [{ type: 'message', kind: 'ADDED', conversationId, seq: message!.seq, pts: message!.pts }],
      }
    })
  } catch (error) {
    if (isUniqueViolation(error, 'messages_idempotency_key')) {
      const original = await retry()
      if (original) return original
    }
    throw error
  }
}
