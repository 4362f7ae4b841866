import { badInput } from '../core/errors.ts'
import { parseId } from '../core/ids.ts'
import { LIMITS } from '../core/limits.ts'
import type { App, Viewer } from '../core/app.ts'
import { accessConversation } from '../policy/access.ts'
import { jsonBytes } from '../send/content.ts'
import { parseUserIds } from '../send/references.ts'

const SIGNAL_TYPE = /^[A-Za-z0-9_.-]{1,64}$/
/** A signal's payload: at most this many bytes as UTF-8 JSON. */
const SIGNAL_PAYLOAD_BYTES = 4 * 1024

export type SignalInput = {
  conversationId: string
  type: string
  payload?: unknown
  toUserIds?: readonly string[] | null
}

/**
 * A typed ephemeral signal (a call invitation, a participant joining): published to the
 * conversation's members, or to `toUserIds` among them only, never stored. Members only (NOT_FOUND
 * otherwise), checked on every call like typing; rate limited with typing (http/plugins/useRateLimits.ts).
 */
export async function sendSignal(app: App, viewer: Viewer, input: SignalInput): Promise<boolean> {
  const conversationId = parseId(input.conversationId, 'Conversation')
  if (!SIGNAL_TYPE.test(input.type)) throw badInput('type must be 1..64 of [A-Za-z0-9_.-]', 'type')
  const payload = input.payload ?? null
  if (jsonBytes(payload) > SIGNAL_PAYLOAD_BYTES)
    throw badInput(`payload must be at most ${SIGNAL_PAYLOAD_BYTES} bytes as JSON`, 'payload')
  const toUserIds = input.toUserIds ? parseUserIds(input.toUserIds, 'toUserIds', LIMITS.membersPerCall) : null
  await accessConversation(app.db, viewer, conversationId, { lock: false })
  void app.realtime.publish([
    {
      type: 'signal',
      conversationId,
      userId: viewer.userId,
      signalType: input.type,
      payload,
      toUserIds,
      sentAt: new Date().toISOString(),
    },
  ])
  return true
}
