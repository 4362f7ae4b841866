import { limitReached } from '../core/errors.ts'
import { parseMessageId } from '../core/ids.ts'
import { deletePin, findPinState, insertPin } from '../../store/pins.ts'
import type { MessageRecord } from '../../store/records.ts'
import { accessConversation } from '../policy/access.ts'
import { type App, type Viewer } from '../core/app.ts'
import { transact } from '../core/transact.ts'
import { writeSystemMessage } from '../send/systemMessages.ts'
import { requireVisibleMessage } from '../lifecycle/lifecycle.ts'
import { checkPins } from '../policy/policy.ts'

/**
 * The audience of a notice about `message`: a directed message's notice is directed the same way
 * (its audience and its sender), so nobody learns of a message they cannot see.
 */
const noticeAudience = (message: MessageRecord): number[] =>
  message.visibleTo.length ? [...new Set([...message.visibleTo, message.senderId!])] : []

/**
 * Pins (`pin: true`) or unpins a message the viewer may see; returns its conversation id. Under the
 * conversation lock: the rule (policy.checkPins), the limit, and a SYSTEM notice (MESSAGE_PINNED /
 * MESSAGE_UNPINNED) through the normal seq and pts allocation. A repeat writes nothing.
 */
export async function setPinned(app: App, viewer: Viewer, messageId: string, pin: boolean): Promise<number> {
  const key = parseMessageId(messageId)
  return transact(app, async (tx) => {
    const access = await accessConversation(tx, viewer, key.conversationId, { lock: true })
    const message = await requireVisibleMessage(tx, viewer, key)
    checkPins(access, message)
    const state = await findPinState(tx, key)
    if (state.pinned === pin) return { result: key.conversationId, events: [] }
    if (pin) {
      const limit = app.settings.pinnedMessagesLimit
      if (state.count >= limit)
        throw limitReached(`a conversation holds at most ${limit} pinned messages; unpin one first`, limit)
      await insertPin(tx, key, viewer.userId)
    } else await deletePin(tx, key)
    const event = pin ? 'MESSAGE_PINNED' : 'MESSAGE_UNPINNED'
    const notice = await writeSystemMessage(
      tx,
      access.conversation,
      { event, actorId: viewer.userId, targetIds: [], text: null, seq: key.seq },
      noticeAudience(message),
    )
    return { result: key.conversationId, events: [notice] }
  })
}
