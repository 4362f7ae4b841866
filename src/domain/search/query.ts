import { badInput } from '../core/errors.ts'
import { queryTerm, toTsquery, type QueryTerm } from './text.ts'

/** Search input limits (README "Limits", docs/search.md). */
export const SEARCH_LIMITS = { queryLength: 200, queryWords: 10, snippetLength: 200 } as const

/** A parsed query: the terms every match must hold, and the tsquery that finds them. */
export type SearchQuery = { terms: QueryTerm[]; tsquery: string }

/** ASCII and typographic double quotes both open and close a phrase. */
const QUOTE = /["“”]/

/**
 * Parses a search query: whitespace separates terms, every term must match, and text in double
 * quotes is one exact phrase (an unclosed quote runs to the end). Empty, over 200 characters, over
 * 10 words, NUL characters, or nothing searchable (only punctuation or emoji): BAD_USER_INPUT.
 */
export function parseSearchQuery(raw: string, field = 'query'): SearchQuery {
  if (raw.includes('\u0000')) throw badInput(`${field} must not contain NUL characters`, field)
  const query = raw.trim()
  if (query.length > SEARCH_LIMITS.queryLength)
    throw badInput(`${field} must be at most ${SEARCH_LIMITS.queryLength} characters`, field)
  const words = query.split(QUOTE).join(' ').split(/\s+/).filter(Boolean)
  if (!words.length) throw badInput(`${field} must not be empty`, field)
  if (words.length > SEARCH_LIMITS.queryWords)
    throw badInput(`${field} must have at most ${SEARCH_LIMITS.queryWords} words`, field)
  const terms = query
    .split(QUOTE)
    .flatMap((part, i) =>
      i % 2
        ? [queryTerm(part, true)]
        : part
            .split(/\s+/)
            .filter(Boolean)
            .map((word) => queryTerm(word, false)),
    )
    .filter((term) => term.length > 0)
  if (!terms.length) throw badInput(`${field} has no letters, digits or characters to search for`, field)
  return { terms, tsquery: toTsquery(terms) }
}
