import { SEARCH_LIMITS } from './query.ts'
import { analyze, matchedRanges, type QueryTerm } from './text.ts'

/** A span of a snippet in UTF-16 code units, as JavaScript strings count. */
export type TextRange = { start: number; length: number }

const ELLIPSIS = '…'
const isLowSurrogate = (code: number) => code >= 0xdc00 && code <= 0xdfff

/**
 * The part of a message's searchable fields (joined by newlines) around its first match, at most
 * `max` code units with an ellipsis where it was cut, and the highlighted spans inside it. The match
 * sits a third of the way in, so the text before it gives some context.
 */
export function snippetOf(
  fields: readonly string[],
  terms: readonly QueryTerm[],
  max: number = SEARCH_LIMITS.snippetLength,
): { snippet: string; highlights: TextRange[] } {
  const { text, units } = analyze(fields)
  const ranges = matchedRanges(units, terms)
  let start = 0
  let end = text.length
  if (text.length > max) {
    const room = max - 2 * ELLIPSIS.length
    const [first = 0, last = 0] = ranges[0] ?? []
    start = Math.max(0, first - Math.floor((room - Math.min(last - first, room)) / 3))
    end = Math.min(text.length, start + room)
    start = Math.max(0, end - room)
    // Never split a surrogate pair.
    if (start > 0 && isLowSurrogate(text.charCodeAt(start))) start++
    if (end < text.length && isLowSurrogate(text.charCodeAt(end))) end--
  }
  const before = start > 0 ? ELLIPSIS : ''
  const snippet = `${before}${text.slice(start, end)}${end < text.length ? ELLIPSIS : ''}`
  const highlights = ranges
    .filter(([from, to]) => to > start && from < end)
    .map(([from, to]) => ({
      start: before.length + Math.max(from, start) - start,
      length: Math.min(to, end) - Math.max(from, start),
    }))
  return { snippet, highlights }
}
