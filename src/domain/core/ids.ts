import { badInput } from './errors.ts'

/**
 * Opaque global ids for node(id): base64url("<Type>:<key>"). Messages are keyed by
 * (conversationId, seq), so a message id is "Message:<conversationId>:<seq>".
 */
export type NodeType =
  | 'User'
  | 'Conversation'
  | 'Message'
  | 'ConversationMember'
  | 'SavedSticker'
  | 'Report'
  | 'AuditEntry'
  | 'Webhook'
  | 'WebhookDelivery'
  | 'Upload'
  | 'Attachment'
  | 'PushDevice'
export type MessageKey = { conversationId: number; seq: number }
export type MemberKey = { conversationId: number; userId: number }

const NODE_TYPES = new Set<string>([
  'User',
  'Conversation',
  'Message',
  'ConversationMember',
  'SavedSticker',
  'Report',
  'AuditEntry',
  'Webhook',
  'WebhookDelivery',
  'Upload',
  'Attachment',
  'PushDevice',
])

export function encodeGlobalId(type: string, key: string | number | bigint): string {
  return Buffer.from(`${type}:${key}`, 'utf8').toString('base64url')
}

export function decodeGlobalId(id: string): { type: NodeType; key: string } {
  const raw = /^[A-Za-z0-9_-]{1,200}={0,2}$/.test(id) ? Buffer.from(id, 'base64url').toString('utf8') : ''
  const at = raw.indexOf(':')
  const type = raw.slice(0, at)
  if (at < 0 || !NODE_TYPES.has(type)) throw badInput(`Malformed id "${id.slice(0, 64)}"`)
  return { type: type as NodeType, key: raw.slice(at + 1) }
}

function positiveInt(text: string, id: string): number {
  if (!/^[1-9][0-9]{0,15}$/.test(text)) throw badInput(`Malformed id "${id.slice(0, 64)}"`)
  const n = Number(text)
  if (!Number.isSafeInteger(n)) throw badInput(`Malformed id "${id.slice(0, 64)}"`)
  return n
}

/** Decodes an id that must name a node of `type`; anything else is BAD_USER_INPUT. */
export function parseId(
  id: string,
  type:
    | 'User'
    | 'Conversation'
    | 'SavedSticker'
    | 'AuditEntry'
    | 'Webhook'
    | 'WebhookDelivery'
    | 'Upload'
    | 'Attachment'
    | 'PushDevice',
): number {
  const decoded = decodeGlobalId(id)
  if (decoded.type !== type) throw badInput(`Expected a ${type} id, got a ${decoded.type} id`)
  return positiveInt(decoded.key, id)
}

/** The number of `id` when it is a well-formed id of `type`, else null (a field that may hold one or a name). */
export function idOfType(id: string, type: 'SavedSticker'): number | null {
  try {
    return parseId(id, type)
  } catch {
    return null
  }
}

/** Decodes an id of `type` whose key is two positive integers "<a>:<b>". */
function parseKeyPair(id: string, type: NodeType): [number, number] {
  const decoded = decodeGlobalId(id)
  if (decoded.type !== type) throw badInput(`Expected a ${type} id, got a ${decoded.type} id`)
  const [first = '', second = '', ...rest] = decoded.key.split(':')
  if (rest.length) throw badInput(`Malformed id "${id.slice(0, 64)}"`)
  return [positiveInt(first, id), positiveInt(second, id)]
}

export function parseMessageId(id: string): MessageKey {
  const [conversationId, seq] = parseKeyPair(id, 'Message')
  return { conversationId, seq }
}

export function parseMemberId(id: string): MemberKey {
  const [conversationId, userId] = parseKeyPair(id, 'ConversationMember')
  return { conversationId, userId }
}

/** A report is keyed by its conversation and its own id: "<conversationId>:<id>". */
export function parseReportId(id: string): { conversationId: number; id: number } {
  const [conversationId, reportId] = parseKeyPair(id, 'Report')
  return { conversationId, id: reportId }
}

/** A message key as text, "<conversationId>:<seq>": the key of per-message maps, and of a Message id. */
export const messageKeyText = (k: MessageKey) => `${k.conversationId}:${k.seq}`

export const messageGlobalId = (m: MessageKey) => encodeGlobalId('Message', messageKeyText(m))
