/**
 * The one text analyzer search uses, for documents and queries alike (docs/search.md "Matching").
 * Chinese and Japanese characters (Han, Hiragana, Katakana) become one unit each, so a document holds
 * every character and every pair of neighbouring characters of a run (Lucene's CJK bigrams): any
 * substring of one or more characters is then a lexeme or a chain of adjacent pairs. Other scripts
 * become words (Intl.Segmenter, so Thai and the like split too), folded for case, width and accents.
 */

/** A character of a CJK run or a word, where it is in the analyzed text and its position in the document. */
export type Unit = { term: string; position: number; start: number; end: number; cjk: boolean }

/** A lexeme of a query term: its text, its offset from the term's first lexeme, and how it matches. */
type QueryLexeme = { text: string; offset: number; match: 'exact' | 'prefix' | 'pair' }
/** A query term matches where all its lexemes sit at their offsets (a word, a run of characters, a phrase). */
export type QueryTerm = QueryLexeme[]

/** tsvector positions stop at 16383: words past it are not indexed. */
export const MAX_POSITION = 16_383
/** Long words are cut to this many characters, in documents and queries alike. */
const MAX_TERM = 60
/** PostgreSQL keeps at most 256 positions per lexeme. */
const MAX_POSITIONS_PER_LEXEME = 256

const CJK_RUN = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\u3006\u30fc\uff70]+/gu
const words = new Intl.Segmenter('en', { granularity: 'word' })
/** One ASCII word with ASCII punctuation (not `_`, which joins words) around it: the segmenter would find just that word. */
const PLAIN_WORD = /^[!-/:-@[-^`{-~]*([A-Za-z0-9]+)[!-/:-@[-^`{-~]*$/d

/** Case, width and accent folding: "Ｃafé" and "cafe" are one word. Only Latin-style combining accents go, so kana keep their marks. */
const foldWord = (s: string) =>
  [
    ...s
      .normalize('NFKD')
      .replace(/[\u0300-\u036f]/g, '')
      .normalize('NFC')
      .toLowerCase(),
  ]
    .slice(0, MAX_TERM)
    .join('')

/** Kana and the main ideograph blocks are their own NFKC form (checked in test/search/search-text.test.ts): no need to fold them. */
const foldsToItself = (cp: number) =>
  (cp >= 0x4e00 && cp <= 0x9fff) ||
  (cp >= 0x3400 && cp <= 0x4dbf) ||
  (cp >= 0x3041 && cp <= 0x3096) ||
  (cp >= 0x30a1 && cp <= 0x30fa)

/**
 * The words of text[from, to) as [term, start, end]. Whitespace always separates words (UAX #29),
 * so each chunk between whitespace segments alone, and plain ASCII chunks skip the segmenter, which
 * costs microseconds per word.
 */
function* wordsOf(text: string, from: number, to: number): Generator<[string, number, number]> {
  for (const chunk of text.slice(from, to).matchAll(/\S+/g)) {
    const at = from + chunk.index
    const plain = PLAIN_WORD.exec(chunk[0])
    if (plain) {
      const [start, end] = plain.indices![1]!
      yield [plain[1]!.slice(0, MAX_TERM).toLowerCase(), at + start, at + end]
      continue
    }
    for (const s of words.segment(chunk[0]))
      if (s.isWordLike) yield [foldWord(s.segment), at + s.index, at + s.index + s.segment.length]
  }
}

/** Is the unit after `u` the next character of the same CJK run (so the two form a pair)? */
const pairsWith = (u: Unit, next: Unit | undefined) =>
  u.cjk &&
  next !== undefined &&
  next.cjk &&
  next.position === u.position + 1 &&
  (next.start === u.end || next.start === u.start)

/**
 * The units of `fields` joined by newlines (offsets into that joined text), up to MAX_POSITION.
 * Each field starts a position further than the last one ended, so a phrase never spans two fields.
 */
export function analyze(fields: readonly string[]): { text: string; units: Unit[] } {
  const units: Unit[] = []
  let position = 1
  let base = 0
  /** Adds a unit at the next position; false once the positions are used up. */
  const add = (term: string, start: number, end: number, cjk: boolean) =>
    position <= MAX_POSITION &&
    units.push({ term, position: position++, start: base + start, end: base + end, cjk }) > 0
  const addWords = (text: string, from: number, to: number) => {
    for (const [term, start, end] of wordsOf(text, from, to)) if (!add(term, start, end, false)) return false
    return true
  }
  const addField = (field: string) => {
    let at = 0
    for (const run of field.matchAll(CJK_RUN)) {
      if (!addWords(field, at, run.index)) return
      let start = run.index
      for (const ch of run[0]) {
        // Width folding (halfwidth kana, compatibility ideographs); a character may fold into several.
        for (const folded of foldsToItself(ch.codePointAt(0)!) ? ch : ch.normalize('NFKC'))
          if (!add(folded, start, start + ch.length, true)) return
        start += ch.length
      }
      at = run.index + run[0].length
    }
    addWords(field, at, field.length)
  }
  for (const field of fields) {
    addField(field)
    base += field.length + 1
    position++
  }
  return { text: fields.join('\n'), units }
}

const quoteLexeme = (s: string) => (/['\\]/.test(s) ? `'${s.replace(/\\/g, '\\\\').replace(/'/g, "''")}'` : `'${s}'`)

/** The tsvector (as its text form) of `fields`: every word, every CJK character and every pair of neighbouring ones. '' when there is nothing to index. */
export function documentVector(fields: readonly string[]): string {
  const { units } = analyze(fields)
  const lexemes = new Map<string, number[]>()
  const add = (text: string, position: number) => {
    const positions = lexemes.get(text) ?? []
    if (positions.length < MAX_POSITIONS_PER_LEXEME) positions.push(position)
    lexemes.set(text, positions)
  }
  units.forEach((u, i) => {
    add(u.term, u.position)
    if (pairsWith(u, units[i + 1])) add(u.term + units[i + 1]!.term, u.position)
  })
  return [...lexemes].map(([text, positions]) => `${quoteLexeme(text)}:${positions.join(',')}`).join(' ')
}

/**
 * The lexemes a query word or phrase needs: each run of two or more CJK characters as its chain of
 * pairs, a lone character as itself, words exact, except that the last word of an unquoted term
 * matches as a prefix.
 */
export function queryTerm(text: string, phrase: boolean): QueryTerm {
  const { units } = analyze([text])
  const lexemes: { text: string; position: number; match: QueryLexeme['match'] }[] = []
  units.forEach((u, i) => {
    const next = units[i + 1]
    const previous = units[i - 1]
    if (pairsWith(u, next)) lexemes.push({ text: u.term + next!.term, position: u.position, match: 'pair' })
    // The last character of a run is inside the pair before it.
    else if (!previous || !pairsWith(previous, u)) lexemes.push({ text: u.term, position: u.position, match: 'exact' })
  })
  const last = lexemes.at(-1)
  if (last && !phrase && !units.at(-1)!.cjk) last.match = 'prefix'
  return lexemes.map((l) => ({ text: l.text, offset: l.position - lexemes[0]!.position, match: l.match }))
}

/**
 * The tsquery (as its text form) that matches a document holding every term: `'a' <1> 'b':* & 'c'`;
 * with a conversation id, over the document's words in that conversation (`'17:a'`, see below).
 */
export function toTsquery(terms: readonly QueryTerm[], conversationId?: number): string {
  const qualified = (text: string) => (conversationId === undefined ? text : `${conversationId}:${text}`)
  const chain = (term: QueryTerm) =>
    term
      .map(
        (l, i) =>
          `${i ? ` <${l.offset - term[i - 1]!.offset}> ` : ''}${quoteLexeme(qualified(l.text))}${l.match === 'prefix' ? ':*' : ''}`,
      )
      .join('')
  return terms.map((t) => `(${chain(t)})`).join(' & ')
}

/**
 * Characters whose lexemes the per-conversation word index leaves out: the same ranges as the
 * migration's message_search_words function (20261206171000_search_conversation_words). Word
 * lexemes never hold them (CJK runs are split out before words), so a query none of whose lexemes
 * holds one finds the same documents in that index as in the plain one.
 */
const NOT_A_CONVERSATION_WORD = /[\u3041-\u3096\u30a1-\u30fa\u3400-\u4dbf\u4e00-\u9fff]/

/** Can the terms be matched in the per-conversation word index? */
export const matchesConversationWords = (terms: readonly QueryTerm[]) =>
  terms.every((t) => t.every((l) => !NOT_A_CONVERSATION_WORD.test(l.text)))

/**
 * Where the terms match in analyzed text, as [start, end) offsets, sorted and merged: the same rule
 * as the tsquery, run over the units, so highlights point at what made the message match.
 */
export function matchedRanges(units: readonly Unit[], terms: readonly QueryTerm[]): [number, number][] {
  const at = new Map(units.map((u) => [u.position, u]))
  const lexemeAt = (l: QueryLexeme, position: number): Unit | null => {
    const u = at.get(position)
    if (!u) return null
    if (l.match === 'pair') {
      const next = at.get(position + 1)
      return pairsWith(u, next) && u.term + next!.term === l.text ? next! : null
    }
    if (l.match === 'prefix') return !u.cjk && u.term.startsWith(l.text) ? u : null
    return u.term === l.text ? u : null
  }
  const ranges: [number, number][] = []
  for (const term of terms) {
    for (const first of units) {
      let end = first.end
      const all = term.every((l) => {
        const u = lexemeAt(l, first.position + l.offset)
        if (u) end = u.end
        return u !== null
      })
      if (all) ranges.push([first.start, end])
    }
  }
  ranges.sort((a, b) => a[0] - b[0] || a[1] - b[1])
  const merged: [number, number][] = []
  for (const r of ranges) {
    const last = merged.at(-1)
    if (last && r[0] <= last[1]) last[1] = Math.max(last[1], r[1])
    else merged.push([...r])
  }
  return merged
}
