import { badInput, notFound } from '../core/errors.ts'
import { parseId, parseMessageId, type MessageKey } from '../core/ids.ts'
import { countCurrentMembers } from '../../store/members.ts'
import { findVisibleMessages } from '../../store/messages.ts'
import type { Conn } from '../../store/sql.ts'
import type { Viewer } from '../core/app.ts'
import { refuseRecalled } from '../policy/policy.ts'
import { LIMITS } from '../core/limits.ts'

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

/** A mention range as stored in a TEXT message's content: UTF-16 units of its text, naming a user or everyone. */
export type MentionRangeRecord = { start: number; length: number; userId?: number; all?: true }
/** TextInput.mentionRanges as GraphQL hands them over. */
export type MentionRangeInput = { start: number; length: number; userId?: string | null; all?: boolean | null }

const isLowSurrogate = (code: number) => code >= 0xdc00 && code <= 0xdfff

/**
 * Mention ranges inside `text`, in JavaScript's UTF-16 units (as search highlights count): each names
 * one user or all, lies inside the text without splitting a surrogate pair (an emoji), covers
 * something besides whitespace, and no two overlap. Membership and the @all right need the
 * conversation (checkReferences, checkSender). Returned in text order.
 */
export function parseMentionRanges(
  text: string,
  ranges: readonly MentionRangeInput[],
  field = 'content.text.mentionRanges',
): MentionRangeRecord[] {
  if (ranges.length > LIMITS.mentionsPerMessage)
    throw badInput(`${field} takes at most ${LIMITS.mentionsPerMessage} ranges`, field)
  const parsed = ranges
    .map(({ start, length, userId, all }): MentionRangeRecord => {
      const end = start + length
      if (start < 0 || length < 1 || end > text.length)
        throw badInput(`${field}: each range must lie inside the text (UTF-16 units)`, field)
      if (isLowSurrogate(text.charCodeAt(start)) || (end < text.length && isLowSurrogate(text.charCodeAt(end))))
        throw badInput(`${field}: a range must not split a character`, field)
      if (!text.slice(start, end).trim()) throw badInput(`${field}: a range must not cover only whitespace`, field)
      if ((userId != null) === (all === true))
        throw badInput(`${field}: each range names either a userId or all: true`, field)
      return userId != null ? { start, length, userId: parseId(userId, 'User') } : { start, length, all: true }
    })
    .sort((a, b) => a.start - b.start)
  parsed.forEach((r, i) => {
    const previous = parsed[i - 1]
    if (previous && previous.start + previous.length > r.start)
      throw badInput(`${field}: ranges must not overlap`, field)
  })
  return parsed
}

/** The mentions a message's ranges add to its mentionUserIds and mentionAll. */
export function rangeMentions(content: unknown): { userIds: number[]; all: boolean } {
  const ranges = (content as { mentionRanges?: MentionRangeRecord[] } | null)?.mentionRanges ?? []
  return {
    userIds: ranges.flatMap((r) => (r.userId === undefined ? [] : [r.userId])),
    all: ranges.some((r) => r.all),
  }
}
