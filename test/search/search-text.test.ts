import { describe, expect, it } from 'vitest'
import { Prisma } from '../../src/store/sql.ts'
import {
  analyze,
  documentVector,
  matchedRanges,
  MAX_POSITION,
  queryTerm,
  toTsquery,
} from '../../src/domain/search/text.ts'
import { testApp } from '../support/harness.ts'

/** A seeded PRNG, so a failure repeats. */
function random(seed: number) {
  return () => {
    seed = (seed * 1103515245 + 12345) % 2147483648
    return seed / 2147483648
  }
}
const pick = <T>(next: () => number, items: readonly T[]) => items[Math.floor(next() * items.length)]!

describe('the search analyzer', () => {
  it('folds kana and ideographs exactly as NFKC does, fast path or not', () => {
    const mismatches: string[] = []
    for (const [from, to] of [
      [0x3041, 0x30ff],
      [0x3400, 0x4dbf],
      [0x4e00, 0x9fff],
      [0xff66, 0xff9d],
    ] as const) {
      for (let cp = from; cp <= to; cp++) {
        const ch = String.fromCodePoint(cp)
        const { units } = analyze([ch])
        if (units.length && units.map((u) => u.term).join('') !== ch.normalize('NFKC')) mismatches.push(ch)
      }
    }
    expect(mismatches).toEqual([])
  })

  it('splits plain ASCII words exactly as Intl.Segmenter does', () => {
    const next = random(7)
    const segmenter = new Intl.Segmenter('en', { granularity: 'word' })
    const alphabet = [...'aZ09', ...`.,:;'"-_()!?@#/`]
    for (let i = 0; i < 3000; i++) {
      const chunk = Array.from({ length: 1 + Math.floor(next() * 8) }, () => pick(next, alphabet)).join('')
      const expected = [...segmenter.segment(chunk)]
        .filter((s) => s.isWordLike)
        .map((s) => [s.segment.toLowerCase(), s.index])
      expect(
        analyze([chunk]).units.map((u) => [u.term, u.start]),
        chunk,
      ).toEqual(expected)
    }
  })

  it('matches in PostgreSQL and in highlights exactly where the plain rule says: CJK by substring, words by prefix', async () => {
    const next = random(11)
    const cjk = [...'今天请假审']
    const latin = ['ab', 'abc', 'b', 'ba']
    const cases = Array.from({ length: 400 }, () => {
      const text = Array.from(
        { length: 2 + Math.floor(next() * 10) },
        () => (next() < 0.6 ? pick(next, cjk) : pick(next, latin)) + pick(next, ['', '', ' ']),
      ).join('')
      const query =
        next() < 0.6
          ? Array.from({ length: 1 + Math.floor(next() * 4) }, () => pick(next, cjk)).join('')
          : pick(next, ['a', 'ab', 'abc', 'b', 'ba', 'c'])
      const cjkQuery = cjk.includes(query[0]!)
      const expected = cjkQuery ? text.includes(query) : (text.match(/[a-z]+/g) ?? []).some((w) => w.startsWith(query))
      return { text, query, expected, term: queryTerm(query, false) }
    })
    const rows = await testApp().db.$queryRaw<{ matches: boolean }[]>(Prisma.sql`
      SELECT d::tsvector @@ q::tsquery AS matches
      FROM unnest(${cases.map((c) => documentVector([c.text]))}::text[], ${cases.map((c) => toTsquery([c.term]))}::text[]) WITH ORDINALITY AS x(d, q, i)
      ORDER BY i`)
    expect(rows.map((r, i) => `${cases[i]!.text} ~ ${cases[i]!.query}: ${r.matches}`)).toEqual(
      cases.map((c) => `${c.text} ~ ${c.query}: ${c.expected}`),
    )
    for (const c of cases) {
      const { text, units } = analyze([c.text])
      const spans = matchedRanges(units, [c.term]).map(([from, to]) => text.slice(from, to))
      expect(spans.length > 0, `${c.text} ~ ${c.query}`).toBe(c.expected)
      if (cjk.includes(c.query[0]!))
        for (const span of spans) expect(span.includes(c.query), `${c.text} ~ ${c.query}`).toBe(true)
    }
  })

  it('indexes up to the last tsvector position and never more', async () => {
    const long = '天'.repeat(MAX_POSITION - 1) + '请假' + '审'.repeat(100)
    const { units } = analyze([long])
    expect(units.at(-1)!.position).toBe(MAX_POSITION)
    const [row] = await testApp().db.$queryRaw<{ head: boolean; tail: boolean }[]>(Prisma.sql`
      SELECT ${documentVector([long])}::tsvector @@ ${toTsquery([queryTerm('天请', false)])}::tsquery AS head,
             ${documentVector([long])}::tsvector @@ ${toTsquery([queryTerm('假审', false)])}::tsquery AS tail`)
    expect(row).toEqual({ head: true, tail: false })
  })
})
