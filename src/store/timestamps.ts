import pg from 'pg'

export const TIMESTAMPTZ = 1184
const parseAny = pg.types.getTypeParser(TIMESTAMPTZ) as (text: string) => Date
const digit = (s: string, i: number) => s.charCodeAt(i) - 48
const twoDigits = (s: string, i: number) => digit(s, i) * 10 + digit(s, i + 1)
const [DASH, SPACE, DOT] = ['-', ' ', '.'].map((c) => c.charCodeAt(0))

/**
 * A timestamptz as PostgreSQL writes it in UTC, '2026-12-02 06:12:05.764037+00' (no fraction, or one
 * of 1–6 digits), read by position: pg's parser (postgres-date) runs three regular expressions per
 * value, about a tenth of the server's CPU on an inbox page of 50 (five dates a row; decision 0225).
 * The same Date to the millisecond (the fraction truncated, as postgres-date's is); anything else
 * (another session time zone, years before 100 or after 9999, BC, infinity) goes to pg's parser,
 * and comes back as it gives it (infinity as a number).
 */
export function parseTimestamptz(text: string): Date {
  const n = text.length
  const fraction = n - 23 // digits after the '.' at 19, before '+00'
  if (n < 22 || n > 29 || fraction === 0 || !text.endsWith('+00')) return parseAny(text)
  if (text.charCodeAt(4) !== DASH || text.charCodeAt(10) !== SPACE || (fraction > 0 && text.charCodeAt(19) !== DOT))
    return parseAny(text)
  const year = twoDigits(text, 0) * 100 + twoDigits(text, 2)
  // Date.UTC reads years 0–99 as 1900–1999.
  if (year < 100) return parseAny(text)
  const ms =
    fraction < 1
      ? 0
      : digit(text, 20) * 100 + (fraction < 2 ? 0 : digit(text, 21) * 10 + (fraction < 3 ? 0 : digit(text, 22)))
  return new Date(
    Date.UTC(
      year,
      twoDigits(text, 5) - 1,
      twoDigits(text, 8),
      twoDigits(text, 11),
      twoDigits(text, 14),
      twoDigits(text, 17),
      ms,
    ),
  )
}
