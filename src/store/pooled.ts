import pg from 'pg'
import { poolOf, statementName, type Db } from '../db/client.ts'
import type { Prisma } from './sql.ts'

const INT8 = 20
const INT8_ARRAY = 1016
const int8Array = pg.types.getTypeParser(INT8_ARRAY as never)
// Most messages mention no one and are directed at no one: '{}' needs no parser.
const int8Numbers = (text: string): number[] => (text === '{}' ? [] : (int8Array(text) as string[]).map(Number))
/** bigint columns (ids, seq, pts) and arrays of them as numbers, the rest as pg parses them (timestamptz: Date, json: parsed). */
const numberTypes = {
  getTypeParser: (oid: number, format?: 'text' | 'binary') =>
    oid === INT8 ? Number : oid === INT8_ARRAY ? int8Numbers : pg.types.getTypeParser(oid as never, format),
}

/**
 * A read on the Prisma adapter's own pg pool, its rows mapped once by the caller, which costs a
 * fraction of Prisma's row mapping (decision 0155): for the hot reads of live delivery. Named like
 * Prisma's statements (statementName; one marked PLANNED_PER_CALL goes unnamed, planned per call).
 * Outside a transaction only: each call may take another connection. A client without a pool goes
 * through Prisma, whose rows carry bigints where these carry numbers (the row mappers take both).
 */
export async function queryPooled<R extends object>(db: Db, sql: Prisma.Sql): Promise<R[]> {
  const pool = poolOf(db)
  if (!pool) return db.$queryRaw<R[]>(sql)
  const { rows } = await pool.query<R>({ text: sql.text, values: sql.values, name: statementName(sql.text), types: numberTypes })
  return rows
}
