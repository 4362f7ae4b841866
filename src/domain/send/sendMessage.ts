import type { Viewer } from '../core/app.ts'
import { callerOf } from '../rateLimits/rateLimits.ts'
import { DuplicateIdempotencyKey, findByClientMessageIds } from '../../store/messages.ts'
import { prepareSend, type SendMessageInput, type SendMessageResult } from './prepare.ts'
import { enqueueSend, sendAlone, type SendApp } from './queue.ts'
import { attachToContent } from '../files/attach.ts'

/**
 * Sends a message: idempotent per (conversation, sender, clientMessageId); a retry returns the
 * original with deduplicated: true. Layer one is the lookup under the conversation lock (in the
 * locking statement itself); layer two is the unique constraint, should anything slip past it.
 * `streaming`: a streamed reply's start (prepareSend).
 */
export async function sendMessage(
  app: SendApp,
  viewer: Viewer,
  input: SendMessageInput,
  streaming = false,
): Promise<SendMessageResult> {
  const send = prepareSend(viewer, input, streaming)
  // Before anything is read or written: a refused send costs no lock and stores nothing.
  await app.limits.consumeSend(callerOf(viewer), send.conversationId)
  send.content = await attachToContent(app, viewer, send.content)
  try {
    return await (app.settings.coalesceSends ? enqueueSend(app, send) : sendAlone(app, send))
  } catch (error) {
    if (!(error instanceof DuplicateIdempotencyKey)) throw error
    const [original] = await findByClientMessageIds(app.db, send.conversationId, [send.key])
    if (!original) throw error
    return { message: original, deduplicated: true }
  }
}
