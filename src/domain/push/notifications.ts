import { encodeGlobalId, messageGlobalId } from '../core/ids.ts'
import type { PushPreview } from '../core/settings.ts'
import { readableText } from '../send/readableText.ts'
import type { PushDeviceRecord, PushPlatform } from '../../store/pushDevices.ts'
import type { PushMessage } from '../../store/pushRecipients.ts'

/** Gorush's platform numbers. */
const GORUSH_PLATFORM: Record<PushPlatform, number> = { APNS: 1, FCM: 2, HUAWEI: 3 }
/** Gorush takes at most this many notifications a request (the contract's cap). */
const NOTIFICATIONS_PER_REQUEST = 100
/** A lock screen shows a line or two: longer text is cut. */
const PREVIEW_CHARS = 200

/** One entry of Gorush's `notifications`: the tokens of one recipient's devices of one platform. */
export type GorushNotification = {
  tokens: string[]
  platform: number
  title?: string
  message: string
  badge: number
  data: { conversationId: string; messageId: string; seq: string }
}

/** What a notification says, per PUSH_PREVIEW: full (sender and text), sender (the sender only), none (neither). */
function notificationText(message: PushMessage, preview: PushPreview): { title?: string; message: string } {
  if (preview === 'none') return { message: 'New message' }
  const sender = message.senderName ?? 'Parley'
  const title =
    message.conversationType === 'GROUP' && message.conversationTitle
      ? `${sender} · ${message.conversationTitle}`
      : sender
  if (preview === 'sender') return { title, message: 'New message' }
  const text = readableText(message.kind, message.content).join(' ').trim()
  const shown = text.length > PREVIEW_CHARS ? `${text.slice(0, PREVIEW_CHARS - 1)}…` : text
  return { title, message: shown || `[${message.kind.toLowerCase()}]` }
}

/**
 * The notifications for one message: per recipient and platform one entry holding that recipient's
 * tokens, with the recipient's badge; split into requests of at most NOTIFICATIONS_PER_REQUEST.
 */
export function buildRequests(
  message: PushMessage,
  devices: readonly PushDeviceRecord[],
  badges: ReadonlyMap<number, number>,
  preview: PushPreview,
): { notifications: GorushNotification[]; devices: PushDeviceRecord[] }[] {
  const text = notificationText(message, preview)
  const data = {
    conversationId: encodeGlobalId('Conversation', message.conversationId),
    messageId: messageGlobalId(message),
    seq: String(message.seq),
  }
  const groups = new Map<string, PushDeviceRecord[]>()
  for (const device of devices) {
    const key = `${device.userId}:${device.platform}`
    groups.set(key, [...(groups.get(key) ?? []), device])
  }
  const entries = [...groups.values()].map((group) => ({
    notification: {
      tokens: group.map((d) => d.token),
      platform: GORUSH_PLATFORM[group[0]!.platform],
      ...text,
      badge: badges.get(group[0]!.userId) ?? 0,
      data,
    },
    devices: group,
  }))
  const requests = []
  for (let i = 0; i < entries.length; i += NOTIFICATIONS_PER_REQUEST) {
    const slice = entries.slice(i, i + NOTIFICATIONS_PER_REQUEST)
    requests.push({ notifications: slice.map((e) => e.notification), devices: slice.flatMap((e) => e.devices) })
  }
  return requests
}
