import { findMessage, recordPress, replaceCard } from '../../store/cards.ts'
import { lockConversation } from '../../store/conversationLocks.ts'
import { findVisibleMessages } from '../../store/messages.ts'
import type { MessageRecord } from '../../store/records.ts'
import type { App, Viewer } from '../core/app.ts'
import { badInput, notFound } from '../core/errors.ts'
import { encodeGlobalId, messageGlobalId, parseMessageId } from '../core/ids.ts'
import { transact } from '../core/transact.ts'
import { changed } from '../lifecycle/lifecycle.ts'
import { checkCardUpdate, refuseRecalled } from '../policy/policy.ts'
import { messageDocument } from '../search/documents.ts'
import { jsonBytes, parseCardUpdate } from '../send/content.ts'
import { recordWebhookEvents } from '../webhooks/outbox.ts'

/** A pressed action's value: at most this many bytes as JSON. */
const VALUE_BYTES = 4 * 1024

type CardRecord = { cardType: string; data: unknown; actions?: { id: string; url?: string }[]; updatedAt?: string }

/**
 * Live cards (docs/agents.md): updateCard replaces a card's data (and actions when given) in place,
 * with the conversation's next pts and an EDITED event, but no edit version: the message is not
 * marked edited. The sender may, or for a SYSTEM card an operator, who need not be a member.
 */
export async function updateCard(
  app: App,
  viewer: Viewer,
  input: { messageId: string; data?: unknown; actions?: unknown },
): Promise<MessageRecord> {
  const key = parseMessageId(input.messageId)
  const update = parseCardUpdate(input)
  return transact(app, async (tx) => {
    const access = await lockConversation(tx, key.conversationId, viewer.userId)
    if (!access || (!access.member && !viewer.isOperator)) throw notFound('Conversation')
    const message = access.member ? (await findVisibleMessages(tx, viewer, [key]))[0] : await findMessage(tx, key)
    if (!message) throw notFound('Message')
    checkCardUpdate(viewer, message)
    const card = message.content as CardRecord
    const content = {
      ...card,
      data: update.data,
      ...(update.actions !== undefined ? { actions: update.actions } : {}),
      updatedAt: new Date().toISOString(),
    }
    const updated = await replaceCard(tx, key, {
      content,
      pts: access.conversation.lastPts + 1,
      searchDocument: app.settings.searchIndexing ? messageDocument('CARD', content) : null,
    })
    if (!updated) throw notFound('Message')
    return changed(updated, 'EDITED', viewer.userId)
  })
}

/**
 * pressCardAction: a member who can see the card records one choice (the same action again is a
 * no-op, another replaces it), delivered as card.action to the webhooks of the card's sender.
 * Unknown ids and url actions (links, no callback) are BAD_USER_INPUT.
 */
export async function pressCardAction(
  app: App,
  viewer: Viewer,
  input: { messageId: string; actionId: string; value?: unknown },
): Promise<MessageRecord> {
  const key = parseMessageId(input.messageId)
  if (jsonBytes(input.value ?? null) > VALUE_BYTES)
    throw badInput(`value must be at most ${VALUE_BYTES} bytes as JSON`, 'value')
  return transact(app, async (tx) => {
    const [message] = await findVisibleMessages(tx, viewer, [key])
    if (!message) throw notFound('Message')
    refuseRecalled(message)
    const action =
      message.kind === 'CARD' ? (message.content as CardRecord).actions?.find((a) => a.id === input.actionId) : null
    if (!action) throw badInput('no such action on this card', 'actionId')
    if (action.url) throw badInput('a url action opens its link; it is not pressed', 'actionId')
    const value = input.value ?? null
    if (await recordPress(tx, key, { userId: viewer.userId, actionId: action.id, value }))
      // To the card's sender (ALL-scope webhooks for a SYSTEM card), in this transaction: a press is heard once it counts.
      await recordWebhookEvents(tx, [
        {
          type: 'CARD_ACTION',
          conversationId: key.conversationId,
          actorId: viewer.userId,
          hearers: {
            userIds: message.senderId === null ? [] : [message.senderId],
            members: false,
            allScope: message.senderType === 'SYSTEM',
          },
          data: {
            messageId: messageGlobalId(key),
            user: { id: encodeGlobalId('User', viewer.userId), handle: viewer.handle },
            actionId: action.id,
            value,
          },
          withPts: false,
        },
      ])
    return { result: message, events: [] }
  })
}
