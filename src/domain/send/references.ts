import { badInput, notFound } from '../core/errors.ts'
import { parseId, parseMessageId, type MessageKey } from '../core/ids.ts'
import { countCurrentMembers } from '../../store/members.ts'
import { findVisibleMessages } from '../../store/messages.ts'
import type { Conn } from '../../store/sql.ts'
import type { Viewer } from '../core/app.ts'
import { refuseRecalled } from '../policy/policy.ts'

/** What a message (or a draft) refers to in its conversation: mentioned users and a quoted message. */

/** Distinct user ids, at most `max`. */
export function parseUserIds(ids: readonly string[] | null | undefined, field: string, max: number): number[] {
  if (!ids) return []
  if (ids.length > max) throw badInput(`${field} takes at most ${max} ids`, field)
  return [...new Set(ids.map((id) => parseId(id, 'User')))]
}

/** A quoted message's key; one of another conversation is NOT_FOUND, like one the viewer cannot see. */
export function parseQuoted(quotedMessageId: string | null | undefined, conversationId: number): MessageKey | null {
  // An empty string is a malformed id (BAD_USER_INPUT), not the absence of one.
  const quoted = quotedMessageId != null ? parseMessageId(quotedMessageId) : null
  if (quoted && quoted.conversationId !== conversationId) throw notFound('Quoted message')
  return quoted
}

/** Mentioned (and directed-to) users must be current members; a quoted message must be visible to the viewer and not recalled. */
export async function checkReferences(
  tx: Conn,
  viewer: Viewer,
  conversationId: number,
  refs: { userIds: readonly number[]; quoted: MessageKey | null },
): Promise<void> {
  if (refs.userIds.length && (await countCurrentMembers(tx, conversationId, refs.userIds)) !== refs.userIds.length) {
    throw badInput('mentioned and directed users must be members of the conversation', 'mentionUserIds')
  }
  if (refs.quoted) {
    const [original] = await findVisibleMessages(tx, viewer, [refs.quoted])
    if (!original) throw notFound('Quoted message')
    refuseRecalled(original, 'quoted')
  }
}
