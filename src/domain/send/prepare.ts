import { badInput } from '../core/errors.ts'
import { parseId, type MessageKey } from '../core/ids.ts'
import type { IdempotencyKey, MessageDraft } from '../../store/messages.ts'
import type { MessageRecord } from '../../store/records.ts'
import type { Conn } from '../../store/sql.ts'
import type { MemberAccess } from '../policy/access.ts'
import type { App, Viewer } from '../core/app.ts'
import { parseContent, type ContentDraft, type ContentInput } from './content.ts'
import { readableText } from './readableText.ts'
import { snapshotContent } from './snapshot.ts'
import { LIMITS } from '../core/limits.ts'
import { checkPrivateChat, checkSender, type PrivatePeer } from '../policy/policy.ts'
import { messageDocument } from '../search/documents.ts'
import { checkSensitiveWords } from './wordFilter.ts'
import { checkReferences, parseQuoted, parseUserIds, rangeMentions } from './references.ts'

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

/** A send whose input is valid; what is left to check needs the conversation lock. */
export type PreparedSend = {
  viewer: Viewer
  conversationId: number
  key: IdempotencyKey
  content: ContentDraft
  quoted: MessageKey | null
  mentionUserIds: number[]
  mentionAll: boolean
  visibleTo: number[]
  /** STREAMING: a streamed reply's start (empty TEXT, written on by appends). */
  status: 'NORMAL' | 'STREAMING'
}

/** What a streamed reply starts as: an empty TEXT (its content input is never parsed). */
const STREAM_START: ContentDraft = { kind: 'TEXT', content: { text: '' } }

/**
 * Everything that can be checked without the database (before the send is queued). `streaming`:
 * the start of a streamed reply, empty TEXT with status STREAMING (input.content is not read).
 */
export function prepareSend(viewer: Viewer, input: SendMessageInput, streaming = false): PreparedSend {
  const conversationId = parseId(input.conversationId, 'Conversation')
  const clientMessageId = input.clientMessageId
  if (clientMessageId.length < 1 || clientMessageId.length > LIMITS.clientMessageIdLength) {
    throw badInput(`clientMessageId must be 1..${LIMITS.clientMessageIdLength} characters`, 'clientMessageId')
  }
  const content = streaming ? STREAM_START : parseContent(input.content)
  // Ranges name their users by position; mentionUserIds stays for clients that send ids only.
  const ranges = rangeMentions('content' in content ? content.content : null)
  const mentionUserIds = [
    ...new Set([...parseUserIds(input.mentionUserIds, 'mentionUserIds', LIMITS.mentionsPerMessage), ...ranges.userIds]),
  ]
  if (mentionUserIds.length > LIMITS.mentionsPerMessage)
    throw badInput(`a message mentions at most ${LIMITS.mentionsPerMessage} users`, 'mentionUserIds')
  const visibleTo = parseUserIds(input.visibleToUserIds, 'visibleToUserIds', LIMITS.visibleToPerMessage)
  // In a directed message, mentioning someone who cannot see it would only confuse them.
  if (visibleTo.length && mentionUserIds.some((id) => id !== viewer.userId && !visibleTo.includes(id))) {
    throw badInput('a directed message can mention only users it is directed to', 'mentionUserIds')
  }
  const quoted = parseQuoted(input.quotedMessageId, conversationId)
  const key = {
    senderType: viewer.kind === 'AGENT' ? ('AGENT' as const) : ('USER' as const),
    senderId: viewer.userId,
    clientMessageId,
  }
  return {
    viewer,
    conversationId,
    key,
    content,
    quoted,
    mentionUserIds,
    mentionAll: (input.mentionAll ?? false) || ranges.all,
    visibleTo,
    status: streaming ? 'STREAMING' : 'NORMAL',
  }
}

/**
 * The rules a send must pass under the conversation lock, before anything is written (a rejected
 * send writes nothing and takes no seq); returns the row to append.
 */
export async function checkSend(
  tx: Conn,
  app: App,
  send: PreparedSend,
  access: MemberAccess,
  locked: { now: Date; blockedByPeer: boolean; privatePeer: PrivatePeer | null },
): Promise<MessageDraft> {
  const { viewer, conversationId } = send
  checkSender(viewer, access, { mentionAll: send.mentionAll, ...locked })
  // Read only under PRIVATE_CHAT_POLICY=friends; after checkSender, so a block answers BLOCKED first.
  if (locked.privatePeer) checkPrivateChat(app.settings.privateChatPolicy, viewer, locked.privatePeer)
  await checkReferences(tx, viewer, conversationId, {
    userIds: [...new Set([...send.mentionUserIds, ...send.visibleTo])],
    quoted: send.quoted,
  })
  const { kind, content, forwardedFrom } = await snapshotContent(tx, viewer, send.content)
  checkSensitiveWords(app.settings.sensitiveWords, readableText(kind, content))
  return {
    ...send.key,
    kind,
    content,
    quotedSeq: send.quoted?.seq ?? null,
    mentionUserIds: send.mentionUserIds,
    mentionAll: send.mentionAll,
    visibleTo: send.visibleTo,
    forwardedFrom,
    searchDocument: app.settings.searchIndexing ? messageDocument(kind, content) : undefined,
    status: send.status,
  }
}
