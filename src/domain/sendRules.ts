import { readFileSync } from 'node:fs'
import { DomainError, forbidden } from '../errors.ts'
import type { MemberAccess } from './access.ts'
import type { Viewer } from './app.ts'
import { canManage } from './conversations.ts'

/**
 * The checks a send passes before anything is written (docs/messages.md "Who may send"). They run
 * under the conversation row lock, so a mute or role change cannot slip between check and write.
 */
export function checkSender(viewer: Viewer, access: MemberAccess, opts: { mentionAll: boolean; now: Date; blockedByPeer: boolean }): void {
  const { conversation, member } = access
  if (conversation.type === 'CHANNEL' && !canManage(member) && !viewer.isOperator) {
    throw forbidden('only the owner, an admin or an operator posts in a channel')
  }
  if (member.mutedUntil && member.mutedUntil > opts.now) {
    throw new DomainError('SENDER_MUTED', `you are muted here until ${member.mutedUntil.toISOString()}`, { mutedUntil: member.mutedUntil.toISOString() })
  }
  if (opts.blockedByPeer) {
    throw new DomainError('BLOCKED', 'this user does not accept your messages')
  }
  if (opts.mentionAll && !canManage(member)) throw forbidden('only the owner or an admin can mention everyone')
}

/** Case- and width-insensitive form used on both sides of the word filter. */
const fold = (s: string) => s.normalize('NFKC').toLowerCase()

/** Parses a word list: one word per line; blank lines and lines starting with # are skipped. */
export function parseSensitiveWords(text: string): string[] {
  return [...new Set(text.split(/\r?\n/).map((line) => fold(line.trim())).filter((w) => w && !w.startsWith('#')))]
}

/** The list from SENSITIVE_WORDS_FILE, read once at start-up (none when the variable is unset). */
export const loadSensitiveWords = (file: string | undefined): string[] => (file ? parseSensitiveWords(readFileSync(file, 'utf8')) : [])

/** CONTENT_REJECTED when any readable text contains a listed word (substring match, case-insensitive). */
export function checkSensitiveWords(words: readonly string[], texts: readonly string[]): void {
  if (!words.length) return
  const folded = texts.map(fold)
  if (folded.some((t) => words.some((w) => t.includes(w)))) throw new DomainError('CONTENT_REJECTED', 'the message contains a word that is not allowed here')
}
