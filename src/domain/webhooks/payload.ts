import { encodeGlobalId, messageGlobalId } from '../core/ids.ts'
import type { ClaimedDelivery } from '../../store/webhookDeliveries.ts'

/** "MESSAGE_ADDED" → "message.added": the body's `type`. */
const bodyType = (eventType: string) => eventType.toLowerCase().replace('_', '.')

/**
 * The request body of a delivery: ids as the GraphQL API gives them (a receiver calls back with
 * them), the message as the change left it (a recalled one without content), and whether it
 * mentions the webhook's owner.
 */
export function renderBody(d: ClaimedDelivery): string {
  const m = d.message
  const message = m && {
    id: messageGlobalId({ conversationId: d.conversationId, seq: d.seq! }),
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
  return JSON.stringify({
    type: bodyType(d.eventType),
    timestamp: new Date(d.createdAt).toISOString(),
    data: {
      conversationId: encodeGlobalId('Conversation', d.conversationId),
      pts: d.pts,
      message,
      ...(d.reactions ? { reactions: d.reactions } : {}),
    },
  })
}
