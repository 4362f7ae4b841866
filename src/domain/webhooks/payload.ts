import { encodeGlobalId, messageGlobalId } from '../core/ids.ts'
import type { ClaimedDelivery } from '../../store/webhookDeliveries.ts'

/** "MESSAGE_ADDED" → "message.added": the body's `type`. */
const bodyType = (eventType: string) => eventType.toLowerCase().replace('_', '.')

/**
 * The request body of a delivery: ids as the GraphQL API gives them (a receiver calls back with
 * them), and the message as the change left it, or another event's data as it was recorded.
 */
export function renderBody(d: ClaimedDelivery): string {
  const head = {
    ...(d.conversationId === null ? {} : { conversationId: encodeGlobalId('Conversation', d.conversationId) }),
    ...(d.withPts ? { pts: d.pts } : {}),
  }
  const data = d.data
    ? { ...head, ...d.data }
    : { ...head, message: renderMessage(d), ...(d.reactions ? { reactions: d.reactions } : {}) }
  return JSON.stringify({ type: bodyType(d.eventType), timestamp: new Date(d.createdAt).toISOString(), data })
}

/** The message as the change left it (a recalled one without content), and whether it mentions the owner. */
function renderMessage(d: ClaimedDelivery) {
  const m = d.message
  return (
    m && {
      id: messageGlobalId({ conversationId: d.conversationId!, seq: d.seq! }),
      seq: d.seq,
      senderType: m.senderType,
      sender: m.senderId === null ? null : { id: encodeGlobalId('User', m.senderId), handle: m.senderHandle },
      kind: m.kind,
      status: m.status,
      ...(m.status === 'RECALLED'
        ? { content: null }
        : m.kind === 'TEXT'
          ? { text: (m.content as { text: string }).text }
          : { content: m.content }),
      mentionsRecipient: d.scope === 'VIEWER' && (m.mentionAll || m.mentionUserIds.map(Number).includes(d.ownerId)),
    }
  )
}
