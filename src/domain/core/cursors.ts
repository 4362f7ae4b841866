import { badInput } from './errors.ts'

/**
 * Keyset cursors, opaque to clients: base64url("<prefix>:<part>|<part>…"). Each connection names its
 * prefix and the parts of its sort key; decoding checks both, so a cursor of one list is refused by
 * another (BAD_USER_INPUT).
 */

const PARTS = {
  /** A timestamp, as ISO-8601. */
  time: {
    encode: (v: Date) => v.toISOString(),
    decode: (s: string) => {
      const date = new Date(s)
      return Number.isNaN(date.getTime()) ? undefined : date
    },
  },
  /** A row id (1 and up). */
  id: { encode: String, decode: (s: string) => (/^[1-9][0-9]{0,15}$/.test(s) ? Number(s) : undefined) },
  /** Free text (a name), escaped so the separator cannot occur in it. */
  text: {
    encode: (v: string) => encodeURIComponent(v),
    decode: (s: string) => {
      try {
        return decodeURIComponent(s)
      } catch {
        return undefined
      }
    },
  },
  /** A flag, as 1 or 0 (a list's pinned part sorts first). */
  bool: {
    encode: (v: boolean) => (v ? '1' : '0'),
    decode: (s: string) => (s === '1' ? true : s === '0' ? false : undefined),
  },
  /** A seq or a user id a list starts after (0 and up). */
  int: { encode: String, decode: (s: string) => (/^(0|[1-9][0-9]{0,15})$/.test(s) ? Number(s) : undefined) },
}

type Part = keyof typeof PARTS
type Values<P extends readonly Part[]> = {
  [I in keyof P]: P[I] extends 'time' ? Date : P[I] extends 'text' ? string : P[I] extends 'bool' ? boolean : number
}

export type KeysetCursor<P extends readonly Part[]> = {
  encode(...values: Values<P>): string
  /** Null for no cursor; BAD_USER_INPUT (naming `field`) for one that is not this list's. */
  decode(cursor: string | null | undefined, field: string): Values<P> | null
}

export function keysetCursor<const P extends readonly Part[]>(prefix: string, parts: P): KeysetCursor<P> {
  const invalid = (field: string) => badInput(`${field} is not a valid cursor`, field)
  return {
    encode: (...values) =>
      Buffer.from(
        `${prefix}:${values.map((v, i) => (PARTS[parts[i]!].encode as (v: unknown) => string)(v)).join('|')}`,
        'utf8',
      ).toString('base64url'),
    decode(cursor, field) {
      if (cursor == null) return null
      const raw = Buffer.from(cursor, 'base64url').toString('utf8')
      // Re-encoding must give the cursor back: base64url decoding skips characters it does not know.
      if (!raw.startsWith(`${prefix}:`) || Buffer.from(raw, 'utf8').toString('base64url') !== cursor.replace(/=+$/, ''))
        throw invalid(field)
      const texts = raw.slice(prefix.length + 1).split('|')
      if (texts.length !== parts.length) throw invalid(field)
      const values = parts.map((part, i) => PARTS[part].decode(texts[i]!))
      if (values.some((v) => v === undefined)) throw invalid(field)
      return values as Values<P>
    },
  }
}
