import { DomainError, notFound } from '../core/errors.ts'
import { groupBy } from '../../lib/groupBy.ts'
import type { RealtimeEvent } from '../../realtime/events.ts'
import { lockConversations, type LockRequest } from '../../store/conversationLocks.ts'
import { appendMessagesTo, type IdempotencyKey, type MessageDraft } from '../../store/messages.ts'
import type { MessageRecord } from '../../store/records.ts'
import { type App } from '../core/app.ts'
import { transact } from '../core/transact.ts'
import { settingsAfterSend } from '../members/conversationSettings.ts'
import { checkSend, type PreparedSend, type SendMessageResult } from './prepare.ts'

const keyOf = (conversationId: number, k: IdempotencyKey) =>
  `${conversationId}:${k.senderType}:${k.senderId}:${k.clientMessageId}`
const storedKeyOf = (m: MessageRecord) => `${m.conversationId}:${m.senderType}:${m.senderId}:${m.clientMessageId}`

/**
 * The outcome of one send in a shared transaction: its result, a reference to an earlier send of the
 * same key, its own error, or `deferred`: its conversation's row was locked elsewhere (only without `wait`).
 */
export type SendOutcome = SendMessageResult | { sameAs: number } | DomainError | 'deferred'

/** One lock request per conversation of the batch: its senders and their idempotency keys. */
function lockRequests(sends: readonly PreparedSend[]): LockRequest[] {
  const byConversation = new Map<number, { userIds: Set<number>; keys: IdempotencyKey[] }>()
  for (const send of sends) {
    const request = byConversation.get(send.conversationId) ?? { userIds: new Set(), keys: [] }
    request.userIds.add(send.viewer.userId)
    request.keys.push(send.key)
    byConversation.set(send.conversationId, request)
  }
  return [...byConversation].map(([conversationId, r]) => ({ conversationId, userIds: [...r.userIds], keys: r.keys }))
}

/**
 * Commits sends, to one conversation or several, in ONE transaction: one statement locks their
 * conversation rows (in id order), one appends every accepted message, one commit. Each send keeps
 * its own checks (in arrival order), idempotency, seq and error; a rejected send is left out of the
 * insert. Without `wait`, a conversation whose row another transaction holds is not waited for: its
 * sends come back `deferred`, so they hold up no other conversation of the batch.
 */
export async function commitSends(
  app: App,
  sends: readonly PreparedSend[],
  opts: { wait: boolean },
): Promise<SendOutcome[]> {
  return transact(app, async (tx) => {
    // The idempotency lookup runs under the lock, so it sees every send committed before this one.
    const locked = await lockConversations(tx, lockRequests(sends), {
      forSend: true,
      skipLocked: !opts.wait,
      privatePeers: app.settings.privateChatPolicy === 'friends',
    })
    const stored = new Map([...locked.values()].flatMap((l) => l.stored.map((m) => [storedKeyOf(m), m] as const)))
    const now = new Date()
    const outcomes: SendOutcome[] = []
    const checked: { conversationId: number; index: number; draft: MessageDraft }[] = []
    const firstOfKey = new Map<string, number>()
    for (const [index, send] of sends.entries()) {
      const lock = locked.get(send.conversationId)
      // Skipped: locked elsewhere, or missing (the waiting retry tells which).
      if (!lock && !opts.wait) {
        outcomes[index] = 'deferred'
        continue
      }
      try {
        const member = lock?.members.get(send.viewer.userId)
        if (!lock || !member) throw notFound('Conversation')
        const key = keyOf(send.conversationId, send.key)
        const original = stored.get(key)
        if (original) outcomes[index] = { message: original, deduplicated: true }
        else if (firstOfKey.has(key)) outcomes[index] = { sameAs: firstOfKey.get(key)! }
        else {
          const draft = await checkSend(
            tx,
            app,
            send,
            { conversation: lock.conversation, member },
            {
              now,
              blockedByPeer: lock.blockedByPeer.has(send.viewer.userId),
              privatePeer: lock.privatePeers.get(send.viewer.userId) ?? null,
            },
          )
          checked.push({ conversationId: send.conversationId, index, draft })
          firstOfKey.set(key, index)
        }
      } catch (error) {
        if (!(error instanceof DomainError)) throw error
        outcomes[index] = error
      }
    }
    const accepted = groupBy(checked, (c) => c.conversationId)
    const appends = [...accepted].map(([conversationId, rows]) => ({
      conversationId,
      last: locked.get(conversationId)!.conversation,
      drafts: rows.map((r) => r.draft),
    }))
    const messages = appends.length ? await appendMessagesTo(tx, appends) : []
    ;[...accepted.values()]
      .flat()
      .forEach(({ index }, i) => (outcomes[index] = { message: messages[i]!, deduplicated: false }))
    // In seq order within each conversation.
    const events: RealtimeEvent[] = messages.map((m) => ({
      type: 'message',
      kind: 'ADDED',
      conversationId: m.conversationId,
      seq: m.seq,
      pts: m.pts,
    }))
    let offset = 0
    const sent = appends.map(({ conversationId, drafts }) => ({
      conversationId,
      messages: messages.slice(offset, (offset += drafts.length)),
      touched: locked.get(conversationId)!.sendSettings,
    }))
    events.push(
      ...(await settingsAfterSend(
        tx,
        sent.filter((s) => s.touched.length),
      )),
    )
    return { result: outcomes, events }
  })
}
