import { lockConversation } from '../../store/conversationLocks.ts'
import { appendMessages, findSystemByClientMessageId } from '../../store/messages.ts'
import type { App, Viewer } from '../core/app.ts'
import { badInput, notFound } from '../core/errors.ts'
import { parseId } from '../core/ids.ts'
import { LIMITS } from '../core/limits.ts'
import { transact } from '../core/transact.ts'
import { requireOperator } from '../policy/policy.ts'
import { messageDocument } from '../search/documents.ts'
import { validateContent, type ContentInput, type ValidContent } from './content.ts'
import type { SendMessageResult } from './prepare.ts'
import { parseUserIds } from './references.ts'
import type { SystemContentRecord } from './systemMessages.ts'

/** The events a host system may post; the others are Parley's own. */
const HOST_EVENTS = new Set(['NOTICE', 'CALL_STARTED', 'CALL_ENDED'])

export type SystemMessageInput = {
  conversationId: string
  clientMessageId: string
  content: ContentInput
  event?: string | null
  actorId?: string | null
  targetIds?: readonly string[] | null
}

/** The stored kind and content: the content as sent, or with an event a SYSTEM message whose text is content.text. */
function systemContent(input: SystemMessageInput, content: ValidContent): ValidContent {
  if (!input.event) {
    if (input.actorId || input.targetIds?.length) throw badInput('actorId and targetIds go with an event', 'event')
    return content
  }
  if (!HOST_EVENTS.has(input.event)) throw badInput('event must be NOTICE, CALL_STARTED or CALL_ENDED', 'event')
  if (content.kind !== 'TEXT') throw badInput('an event takes its text from content.text', 'content')
  const record: SystemContentRecord = {
    event: input.event as SystemContentRecord['event'],
    actorId: input.actorId ? parseId(input.actorId, 'User') : null,
    targetIds: parseUserIds(input.targetIds, 'targetIds', LIMITS.membersPerCall),
    text: content.content.text as string,
  }
  return { kind: 'SYSTEM', content: record }
}

/**
 * postSystemMessage: a host system (an operator's token) posts as the conversation itself —
 * senderType SYSTEM, no sender — text or card content, or a NOTICE or call event. Operators need
 * not be members; idempotent by clientMessageId per conversation (looked up under the row lock).
 * Text and cards count as unread and alert like anyone's message; events do not (docs/agents.md).
 */
export async function postSystemMessage(
  app: App,
  viewer: Viewer,
  input: SystemMessageInput,
): Promise<SendMessageResult> {
  requireOperator(viewer, 'post SYSTEM messages')
  const conversationId = parseId(input.conversationId, 'Conversation')
  const { clientMessageId } = input
  if (clientMessageId.length < 1 || clientMessageId.length > LIMITS.clientMessageIdLength)
    throw badInput(`clientMessageId must be 1..${LIMITS.clientMessageIdLength} characters`, 'clientMessageId')
  const { kind, content } = systemContent(input, validateContent(input.content))
  if ('attachmentId' in content) throw badInput('a SYSTEM message links media by url', 'content')
  return transact<SendMessageResult>(app, async (tx) => {
    const access = await lockConversation(tx, conversationId, viewer.userId)
    if (!access) throw notFound('Conversation')
    const original = await findSystemByClientMessageId(tx, conversationId, clientMessageId)
    if (original) return { result: { message: original, deduplicated: true }, events: [] }
    const [message] = await appendMessages(tx, conversationId, access.conversation, [
      {
        senderType: 'SYSTEM',
        senderId: null,
        kind,
        clientMessageId,
        content,
        quotedSeq: null,
        mentionUserIds: [],
        mentionAll: false,
        visibleTo: [],
        searchDocument: app.settings.searchIndexing ? messageDocument(kind, content) : undefined,
      },
    ])
    return {
      result: { message: message!, deduplicated: false },
      events: [{ type: 'message', kind: 'ADDED', conversationId, seq: message!.seq, pts: message!.pts }],
    }
  })
}
