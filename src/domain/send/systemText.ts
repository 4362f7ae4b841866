import type { SystemContentRecord } from './systemMessages.ts'

/** "Alice", "Alice and Bob", "Alice, Bob and 3 others": distinct names, in order. */
export function listNames(names: readonly string[]): string {
  const distinct = [...new Set(names)]
  const others = distinct.length - 2
  return others > 0
    ? `${distinct[0]}, ${distinct[1]} and ${others} other${others > 1 ? 's' : ''}`
    : distinct.join(' and ')
}

const ROLE_PHRASE: Record<string, string> = { OWNER: 'the owner', ADMIN: 'an admin', MEMBER: 'a member' }

/**
 * The sentence a client shows for a SYSTEM message (SystemContent.text), in English, from the
 * stored event and the current display names; `detail` is the stored text (a title, a role, an end time).
 */
export function renderSystemText(
  content: SystemContentRecord,
  actorName: string | null,
  targetNames: readonly string[],
): string {
  const actor = actorName ?? 'Someone'
  const targets = listNames(targetNames) || 'someone'
  const detail = content.text
  switch (content.event) {
    case 'CONVERSATION_CREATED':
      return detail ? `${actor} created “${detail}”` : `${actor} started the conversation`
    case 'MEMBERS_ADDED':
      return `${actor} added ${targets}`
    case 'MEMBER_REMOVED':
      return `${actor} removed ${targets}`
    case 'MEMBER_LEFT':
      return `${actor} left`
    case 'TITLE_CHANGED':
      return `${actor} renamed the conversation to “${detail ?? ''}”`
    case 'ROLE_CHANGED':
      return `${actor} made ${targets} ${ROLE_PHRASE[detail ?? ''] ?? 'a member'}`
    case 'MEMBER_MUTED':
      return detail ? `${actor} muted ${targets} until ${detail}` : `${actor} unmuted ${targets}`
    case 'CALL_STARTED':
      return `${actor} started a call`
    case 'CALL_ENDED':
      return `${actor} ended the call`
    case 'MESSAGE_PINNED':
      return `${actor} pinned a message`
    case 'MESSAGE_UNPINNED':
      return `${actor} unpinned a message`
    case 'FRIEND_ADDED':
      return `${actor} and ${targets} are now friends`
    // A notice says what it says, whoever's name it carries.
    case 'NOTICE':
      return detail ?? ''
  }
}
