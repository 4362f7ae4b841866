import { readFileSync } from 'node:fs'
import { DomainError } from '../core/errors.ts'

/** Case- and width-insensitive form used on both sides of the word filter. */
const fold = (s: string) => s.normalize('NFKC').toLowerCase()

/** Parses a word list: one word per line; blank lines and lines starting with # are skipped. */
function parseSensitiveWords(text: string): string[] {
  return [
    ...new Set(
      text
        .split(/\r?\n/)
        .map((line) => fold(line.trim()))
        .filter((w) => w && !w.startsWith('#')),
    ),
  ]
}

/** The list from SENSITIVE_WORDS_FILE, read once at start-up (none when the variable is unset). */
export const loadSensitiveWords = (file: string | undefined): string[] =>
  file ? parseSensitiveWords(readFileSync(file, 'utf8')) : []

/** CONTENT_REJECTED when any readable text contains a listed word (substring match, case-insensitive). */
export function checkSensitiveWords(words: readonly string[], texts: readonly string[]): void {
  if (!words.length) return
  const folded = texts.map(fold)
  if (folded.some((t) => words.some((w) => t.includes(w))))
    throw new DomainError('CONTENT_REJECTED', 'the message contains a word that is not allowed here')
}
