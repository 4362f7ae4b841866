import pg from 'pg'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { TIMESTAMPTZ, parseTimestamptz } from '../../src/store/timestamps.ts'

/**
 * The pooled reads' timestamptz parser (decision 0225) must give the Date pg's own parser
 * (postgres-date) gives for every text PostgreSQL writes: each value here comes from the server.
 */
let client: pg.Client
const pgParser = pg.types.getTypeParser(TIMESTAMPTZ) as (text: string) => Date | number
// Text, not Dates: the values as PostgreSQL writes them.
const texts = async (sql: string) =>
  (await client.query<{ t: string }>({ text: sql, types: { getTypeParser: () => (v: string) => v } })).rows.map(
    (r) => r.t,
  )
const same = (values: string[]) =>
  expect(values.map((v) => [v, Number(parseTimestamptz(v))])).toEqual(values.map((v) => [v, Number(pgParser(v))]))

beforeAll(async () => {
  client = new pg.Client({ connectionString: inject('databaseUrl') })
  await client.connect()
})
afterAll(() => client.end())

describe('timestamptz read by position', () => {
  it('equals postgres-date in UTC for every fraction length and across the years', async () => {
    await client.query(`SET TIME ZONE 'UTC'`)
    const values = await texts(`
      SELECT (timestamptz '2026-12-02 06:12:05+00' + make_interval(secs => round((i * 7919 % 1000000) / 1e6, i % 7)::float8))::text AS t
      FROM generate_series(1, 3000) i
      UNION ALL SELECT (timestamptz '0100-01-01 00:00:00+00' + make_interval(days => i * 1237, secs => i * 0.000137))::text FROM generate_series(0, 2950) i
      UNION ALL SELECT v::timestamptz::text FROM unnest(ARRAY['0099-12-31 23:59:59.999+00', '0001-01-01 00:00:00+00', '0044-03-15 12:00:00 BC',
        '9999-12-31 23:59:59.999999+00', '10000-01-01 00:00:00+00', 'infinity', '-infinity', '2024-02-29 00:00:00.5+00', '2026-12-02 06:12:05.000001+00']) v`)
    // Every fraction length PostgreSQL writes, none to six digits.
    expect(new Set(values.map((v) => /(?:\.(\d+))?\+00$/.exec(v)?.[1]?.length ?? 0))).toEqual(
      new Set([0, 1, 2, 3, 4, 5, 6]),
    )
    same(values)
  })

  it('equals postgres-date in a session zone other than UTC', async () => {
    await client.query(`SET TIME ZONE 'Asia/Kolkata'`)
    same(
      await texts(
        `SELECT (now() - make_interval(days => i, secs => i * 0.001234))::text AS t FROM generate_series(0, 200) i`,
      ),
    )
    await client.query(`SET TIME ZONE 'America/St_Johns'`)
    same(await texts(`SELECT (now() - make_interval(days => i * 17))::text AS t FROM generate_series(0, 200) i`))
  })
})
