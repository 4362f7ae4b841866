import { DomainError, badInput, notFound } from '../errors.ts'
import { parseId, type MessageKey } from '../ids.ts'
import type { RealtimeEvent } from '../realtime/events.ts'
import { lockConversationFor } from '../store/conversations.ts'
import { DuplicateIdempotencyKey, appendMessages, findByClientMessageIds, type IdempotencyKey, type MessageDraft } from '../store/messages.ts'
import type { MessageRecord } from '../store/records.ts'
import type { Conn } from '../store/sql.ts'
import type { MemberAccess } from './access.ts'
import { transact, type App, type Viewer } from './app.ts'
import { parseContent, readableText, snapshotContent, type ContentDraft, type ContentInput } from './content.ts'
import { LIMITS } from './limits.ts'
import { recordSendBatch } from '../ops/metrics.ts'
import { checkSender } from './policy.ts'
import { callerOf } from './rateLimits.ts'
import { messageDocument } from './searchIndex.ts'
import { checkSensitiveWords } from './wordFilter.ts'
import { settingsAfterSend } from './conversationSettings.ts'
import { checkReferences, parseQuoted, parseUserIds } from './references.ts'

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
type PreparedSend = {
  viewer: Viewer
  conversationId: number
  key: IdempotencyKey
  content: ContentDraft
  quoted: MessageKey | null
  mentionUserIds: number[]
  mentionAll: boolean
  visibleTo: number[]
}

/** Everything that can be checked without the database. */
function prepareSend(viewer: Viewer, input: SendMessageInput): PreparedSend {
  const conversationId = parseId(input.conversationId, 'Conversation')
  const clientMessageId = input.clientMessageId
  if (clientMessageId.length < 1 || clientMessageId.length > LIMITS.clientMessageIdLength) {
    throw badInput(`clientMessageId must be 1..${LIMITS.clientMessageIdLength} characters`, 'clientMessageId')
  }
  const content = parseContent(input.content)
  const mentionUserIds = parseUserIds(input.mentionUserIds, 'mentionUserIds', LIMITS.mentionsPerMessage)
  const visibleTo = parseUserIds(input.visibleToUserIds, 'visibleToUserIds', LIMITS.visibleToPerMessage)
  // In a directed message, mentioning someone who cannot see it would only confuse them.
  if (visibleTo.length && mentionUserIds.some((id) => id !== viewer.userId && !visibleTo.includes(id))) {
    throw badInput('a directed message can mention only users it is directed to', 'mentionUserIds')
  }
  const quoted = parseQuoted(input.quotedMessageId, conversationId)
  const key = { senderType: viewer.kind === 'AGENT' ? ('AGENT' as const) : ('USER' as const), senderId: viewer.userId, clientMessageId }
  return { viewer, conversationId, key, content, quoted, mentionUserIds, mentionAll: input.mentionAll ?? false, visibleTo }
}

/**
 * The rules a send must pass under the conversation lock, before anything is written (a rejected
 * send writes nothing and takes no seq); returns the row to append.
 */
async function checkSend(tx: Conn, app: App, send: PreparedSend, access: MemberAccess, locked: { now: Date; blockedByPeer: boolean }): Promise<MessageDraft> {
  const { viewer, conversationId } = send
  checkSender(viewer, access, { mentionAll: send.mentionAll, ...locked })
  await checkReferences(tx, viewer, conversationId, { userIds: [...new Set([...send.mentionUserIds, ...send.visibleTo])], quoted: send.quoted })
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
  }
}

const keyOf = (k: IdempotencyKey) => `${k.senderType}:${k.senderId}:${k.clientMessageId}`
const storedKeyOf = (m: MessageRecord) => `${m.senderType}:${m.senderId}:${m.clientMessageId}`

/** The outcome of one send in a shared transaction: its result, a reference to an earlier send of the same key, or its own error. */
type Outcome = SendMessageResult | { sameAs: number } | DomainError

/**
 * Commits sends to one conversation in ONE transaction: one row lock, one multi-row insert, one
 * commit. Each send keeps its own checks, idempotency, seq (in arrival order) and error.
 */
async function commitSends(app: App, conversationId: number, sends: PreparedSend[]): Promise<Outcome[]> {
  return transact(app, async (tx) => {
    // The idempotency lookup runs under the lock, so it sees every send committed before this one.
    const senders = [...new Set(sends.map((s) => s.viewer.userId))]
    const locked = await lockConversationFor(tx, conversationId, senders, sends.map((s) => s.key), { forSend: true })
    const stored = new Map(locked?.stored.map((m) => [storedKeyOf(m), m]))
    const now = new Date()
    const outcomes: Outcome[] = []
    const accepted: { index: number; draft: MessageDraft }[] = []
    const firstOfKey = new Map<string, number>()
    for (const [index, send] of sends.entries()) {
      try {
        const member = locked?.members.get(send.viewer.userId)
        if (!locked || !member) throw notFound('Conversation')
        const key = keyOf(send.key)
        const original = stored.get(key)
        if (original) outcomes[index] = { message: original, deduplicated: true }
        else if (firstOfKey.has(key)) outcomes[index] = { sameAs: firstOfKey.get(key)! }
        else {
          accepted.push({ index, draft: await checkSend(tx, app, send, { conversation: locked.conversation, member }, { now, blockedByPeer: locked.blockedByPeer.has(send.viewer.userId) }) })
          firstOfKey.set(key, index)
        }
      } catch (error) {
        if (!(error instanceof DomainError)) throw error
        outcomes[index] = error
      }
    }
    const messages = accepted.length ? await appendMessages(tx, conversationId, locked!.conversation, accepted.map((a) => a.draft)) : []
    accepted.forEach(({ index }, i) => (outcomes[index] = { message: messages[i]!, deduplicated: false }))
    const events: RealtimeEvent[] = messages.map((m) => ({ type: 'message', kind: 'ADDED', conversationId, seq: m.seq, pts: m.pts }))
    if (messages.length) events.push(...(await settingsAfterSend(tx, conversationId, messages, locked!.sendSettings)))
    return { result: outcomes, events }
  })
}

type Waiter = { send: PreparedSend; resolve: (r: SendMessageResult) => void; reject: (e: unknown) => void }

const MAX_BATCH = 100
/** Per app (App.sends) and conversation: the sends waiting while a transaction for that conversation runs. */
export type SendQueues = Map<number, Waiter[]>

/**
 * Coalescing: a send to a conversation with no transaction in flight commits at once (a lone sender
 * waits for nobody); sends arriving meanwhile queue and commit together in the next transaction.
 * One commit per batch instead of one per message lifts a hot conversation past the
 * one-commit-per-message ceiling.
 */
function enqueueSend(app: App, send: PreparedSend): Promise<SendMessageResult> {
  const conversationQueues = app.sends
  return new Promise((resolve, reject) => {
    const queue = conversationQueues.get(send.conversationId)
    if (queue) return void queue.push({ send, resolve, reject })
    conversationQueues.set(send.conversationId, [])
    void (async () => {
      let batch: Waiter[] = [{ send, resolve, reject }]
      while (batch.length) {
        await settle(app, send.conversationId, batch)
        batch = conversationQueues.get(send.conversationId)!.splice(0, MAX_BATCH)
      }
      conversationQueues.delete(send.conversationId)
    })()
  })
}

async function settle(app: App, conversationId: number, batch: Waiter[]): Promise<void> {
  try {
    const outcomes = await commitSends(app, conversationId, batch.map((w) => w.send))
    // Counted once committed: a batch that falls back to one-by-one counts as the singles that commit.
    recordSendBatch(app, batch.length)
    const result = (i: number): Outcome => {
      const outcome = outcomes[i]!
      return 'sameAs' in outcome ? { ...(result(outcome.sameAs) as SendMessageResult), deduplicated: true } : outcome
    }
    batch.forEach((waiter, i) => {
      const outcome = result(i)
      if (outcome instanceof DomainError) waiter.reject(outcome)
      else waiter.resolve(outcome as SendMessageResult)
    })
  } catch (error) {
    if (batch.length === 1) return batch[0]!.reject(error)
    // Something broke the shared transaction: settle each send alone, so only its own send fails.
    for (const waiter of batch) await settle(app, conversationId, [waiter])
  }
}

async function sendOnce(app: App, send: PreparedSend): Promise<SendMessageResult> {
  return new Promise((resolve, reject) => void settle(app, send.conversationId, [{ send, resolve, reject }]))
}

/**
 * Sends a message: idempotent per (conversation, sender, clientMessageId); a retry returns the
 * original with deduplicated: true. Layer one is the lookup under the conversation lock (in the
 * locking statement itself); layer two is the unique constraint, should anything slip past it.
 */
export async function sendMessage(app: App, viewer: Viewer, input: SendMessageInput): Promise<SendMessageResult> {
  const send = prepareSend(viewer, input)
  // Before anything is read or written: a refused send costs no lock and stores nothing.
  await app.limits.consumeSend(callerOf(viewer), send.conversationId)
  try {
    return await (app.settings.coalesceSends ? enqueueSend(app, send) : sendOnce(app, send))
  } catch (error) {
    if (!(error instanceof DuplicateIdempotencyKey)) throw error
    const [original] = await findByClientMessageIds(app.db, send.conversationId, [send.key])
    if (!original) throw error
    return { message: original, deduplicated: true }
  }
}
