import { limitReached } from '../core/errors.ts'
import { parseMessageId, type MessageKey } from '../core/ids.ts'
import { deleteReaction, findReactionState, insertReaction, type ReactorRecord } from '../../store/reactions.ts'
import type { MessageRecord } from '../../store/records.ts'
import { accessConversation } from '../policy/access.ts'
import { type App, type Viewer } from '../core/app.ts'
import { transact } from '../core/transact.ts'
import { keysetCursor } from '../core/cursors.ts'
import { parseEmoji } from './emoji.ts'
import { pageSize } from '../core/input.ts'
import { changed, requireVisibleMessage } from '../lifecycle/lifecycle.ts'
import type { Loaders } from '../history/loaders.ts'
import { forwardPage, type Connection } from '../core/paging.ts'
import { checkReacts, recalledError } from '../policy/policy.ts'

/**
 * Adds (`add: true`) or removes the viewer's reaction to a message they may see. Under the
 * conversation lock: the rule (policy.checkReacts), the limits, and the change, which takes the
 * next pts (a MessageEvent REACTIONS_CHANGED, and an entry of Conversation.changes). Idempotent: a
 * repeat returns the message unchanged and takes no pts.
 */
export async function setReaction(
  app: App,
  viewer: Viewer,
  messageId: string,
  emojiInput: string,
  add: boolean,
): Promise<MessageRecord> {
  const key = parseMessageId(messageId)
  const emoji = parseEmoji(emojiInput)
  return transact(app, async (tx) => {
    const access = await accessConversation(tx, viewer, key.conversationId, { lock: true })
    const message = await requireVisibleMessage(tx, viewer, key)
    checkReacts(message)
    const state = await findReactionState(tx, key, viewer.userId)
    if (state.mine.includes(emoji) === add) return { result: message, events: [] }
    if (add) checkLimits(app, state, emoji)
    const reaction = { ...key, emoji, userId: viewer.userId }
    const pts = access.conversation.lastPts + 1
    const updated = await (add ? insertReaction(tx, reaction, pts) : deleteReaction(tx, reaction, pts))
    // The lock makes this unreachable (a recall takes it too); the last guard should one skip it.
    if (!updated) throw recalledError()
    return changed(updated, 'REACTIONS_CHANGED', viewer.userId)
  })
}

function checkLimits(app: App, state: { mine: string[]; emoji: string[] }, emoji: string): void {
  const { emojiPerMessage, perUser } = app.settings.reactionLimits
  if (state.mine.length >= perUser)
    throw limitReached(`you can react with at most ${perUser} emoji to one message`, perUser)
  if (!state.emoji.includes(emoji) && state.emoji.length >= emojiPerMessage) {
    throw limitReached(`a message holds at most ${emojiPerMessage} different emoji`, emojiPerMessage)
  }
}

const REACTOR_CURSOR = keysetCursor('reactor', ['time', 'int'])

/** ReactionGroup.users: who reacted, earliest first (batched across the request by `loaders.reactors`). */
export async function listReactionUsers(
  loaders: Loaders,
  group: MessageKey & { emoji: string },
  args: { first?: number | null; after?: string | null },
): Promise<Connection<ReactorRecord>> {
  const limit = pageSize(args.first, 'first')
  const after = REACTOR_CURSOR.decode(args.after, 'after')
  const page = {
    conversationId: group.conversationId,
    seq: group.seq,
    emoji: group.emoji,
    after: after && { reactedAt: after[0], userId: after[1] },
    limit: limit + 1,
  }
  const rows = await loaders.reactors.load(page)
  return forwardPage(rows, limit, (r) => REACTOR_CURSOR.encode(r.reactedAt, r.id), after !== null)
}
