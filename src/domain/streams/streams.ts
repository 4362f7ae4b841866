import { lockConversation } from '../../store/conversationLocks.ts'
import type { MessageRecord } from '../../store/records.ts'
import { endStream, findStream, storeStreamText } from '../../store/streams.ts'
import { findVisibleMessages } from '../../store/messages.ts'
import type { App, Viewer } from '../core/app.ts'
import { badInput, DomainError, forbidden, notFound, retryLater } from '../core/errors.ts'
import { parseMessageId, type MessageKey } from '../core/ids.ts'
import { LIMITS } from '../core/limits.ts'
import { transact } from '../core/transact.ts'
import { changed } from '../lifecycle/lifecycle.ts'
import { isSender, refuseRecalled } from '../policy/policy.ts'
import { messageDocument } from '../search/documents.ts'
import type { SendMessageInput, SendMessageResult } from '../send/prepare.ts'
import type { SendApp } from '../send/queue.ts'
import { sendMessage } from '../send/sendMessage.ts'
import { storeLater } from './storeLater.ts'
import { DELTAS_PER_SECOND, STREAM_LIMITS as limits } from './limits.ts'

/**
 * Streamed replies (docs/agents.md): start stores an empty STREAMING TEXT; each append goes through
 * the stream states beside the bus (realtime/streams.ts), which check the sequence, keep the text
 * and publish the delta in one step, so an append writes nothing to the database unless the text
 * is due to be stored (every STORE_EVERY_MS, in place); finish stores the final text with one pts.
 */

/** startStreamingMessage: a send of an empty STREAMING TEXT (idempotent by clientMessageId, alerting as a send does). */
export async function startStreamingMessage(
  app: SendApp,
  viewer: Viewer,
  input: Pick<SendMessageInput, 'conversationId' | 'clientMessageId' | 'quotedMessageId'>,
): Promise<SendMessageResult> {
  const sent = await sendMessage(app, viewer, { ...input, content: {} }, true)
  const { message } = sent
  if (!sent.deduplicated)
    await app.realtime.streams.open(message, { senderId: viewer.userId, sequence: 0, text: '', touchedAt: Date.now() })
  return sent
}

/** Why a stream refuses the viewer when its state does not know it or names another sender: read from the database. */
async function refusal(app: App, viewer: Viewer, key: MessageKey): Promise<DomainError> {
  const [message] = await findVisibleMessages(app.db, viewer, [key])
  if (!message) return notFound('Message')
  if (!isSender(message, viewer)) return forbidden('only the sender may append to or finish a streamed message')
  refuseRecalled(message)
  return new DomainError('NOT_EDITABLE', 'this message is not streaming')
}

/**
 * appendToStreamingMessage: `sequence` must be the last one + 1 (the last again is a no-op that
 * answers true). A state lost (Redis restarted) is read back from the database, then the append retried.
 */
export async function appendToStreamingMessage(
  app: App,
  viewer: Viewer,
  input: { messageId: string; sequence: number; delta: string },
): Promise<boolean> {
  const key = parseMessageId(input.messageId)
  if (!Number.isSafeInteger(input.sequence) || input.sequence < 1)
    throw badInput('sequence must be 1 or more', 'sequence')
  if (input.delta.length > LIMITS.textLength)
    throw badInput(`delta must be at most ${LIMITS.textLength} characters`, 'delta')
  const append = { ...key, senderId: viewer.userId, sequence: input.sequence, delta: input.delta, now: Date.now() }
  let outcome = await app.realtime.streams.append(append, limits)
  if (outcome.result === 'unknown') {
    const stored = await findStream(app.db, key)
    if (!stored || stored.senderId !== viewer.userId) throw await refusal(app, viewer, key)
    await app.realtime.streams.open(key, { ...stored, touchedAt: Date.now() })
    outcome = await app.realtime.streams.append(append, limits)
  }
  switch (outcome.result) {
    case 'appended':
      if (outcome.store) await storeText(app, key, input.sequence, outcome.text)
      else storeLater(app, key, () => storeText(app, key, input.sequence, outcome.text))
      return true
    case 'repeat':
      return true
    case 'gap':
      throw badInput(`sequence must be ${outcome.expected} (the last one + 1)`, 'sequence')
    case 'tooLong':
      throw badInput(`a streamed message holds at most ${LIMITS.textLength} characters`, 'delta')
    case 'rateLimited':
      throw retryLater('RATE_LIMITED', `a stream takes at most ${DELTAS_PER_SECOND} deltas a second`, 1000)
    case 'unknown':
    case 'notSender':
      throw await refusal(app, viewer, key)
  }
}

/** Stores the text so far; a stream found over (recalled, ended elsewhere) forgets its state. */
async function storeText(app: App, key: MessageKey, sequence: number, text: string): Promise<void> {
  if (!(await storeStreamText(app.db, key, sequence, text))) await app.realtime.streams.close(key)
}

/**
 * Ends a stream with `text`, else the live text so far (else the stored one): status NORMAL, one pts
 * (STREAM_ENDED), the search document; `by` null is the idle sweeper. Null when it is not streaming
 * any more (another instance or call ended it).
 */
export async function endStreaming(
  app: App,
  key: MessageKey,
  by: Viewer | null,
  text: string | null,
): Promise<MessageRecord | null> {
  const live = text === null ? await app.realtime.streams.peek(key) : null
  const ended = await transact(app, async (tx) => {
    const access = await lockConversation(tx, key.conversationId, by?.userId ?? 0)
    if (by && !access?.member) throw notFound('Conversation')
    const stored = await findStream(tx, key, true)
    if (!stored) return { result: null, events: [] }
    const finalText = text ?? (live && live.sequence >= stored.sequence ? live.text : stored.text)
    const message = await endStream(tx, key, {
      text: finalText,
      pts: access!.conversation.lastPts + 1,
      searchDocument: app.settings.searchIndexing ? messageDocument('TEXT', { text: finalText }) : null,
    })
    return message ? changed(message, 'STREAM_ENDED') : { result: null, events: [] }
  })
  await app.realtime.streams.close(key)
  return ended
}

/** finishStreamingMessage: by the sender only; a finished stream answers the message as it is (a retried finish succeeds). */
export async function finishStreamingMessage(
  app: App,
  viewer: Viewer,
  input: { messageId: string; text?: string | null },
): Promise<MessageRecord> {
  const key = parseMessageId(input.messageId)
  const text = input.text ?? null
  if (text !== null && text.length > LIMITS.textLength)
    throw badInput(`text must be at most ${LIMITS.textLength} characters`, 'text')
  const stored = await findStream(app.db, key)
  if (!stored || stored.senderId !== viewer.userId) {
    const error = await refusal(app, viewer, key)
    if (error.code !== 'NOT_EDITABLE') throw error
  }
  const ended = await endStreaming(app, key, viewer, text)
  if (ended) return ended
  const [message] = await findVisibleMessages(app.db, viewer, [key])
  if (!message) throw notFound('Message')
  return message
}
