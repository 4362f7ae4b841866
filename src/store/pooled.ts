import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api'
import pg from 'pg'
import { poolOf, queryLogOf, statementName, type Db } from '../db/client.ts'
import { replicaFallback } from '../db/replicas.ts'
import { tracer } from '../ops/tracing.ts'
import type { Conn, Prisma } from './sql.ts'
import { TIMESTAMPTZ, parseTimestamptz } from './timestamps.ts'

const INT8 = 20
const INT8_ARRAY = 1016
const int8Array = pg.types.getTypeParser(INT8_ARRAY as never)
// Most messages mention no one and are directed at no one: '{}' needs no parser.
const int8Numbers = (text: string): number[] => (text === '{}' ? [] : (int8Array(text) as string[]).map(Number))
/** bigint columns (ids, seq, pts) and arrays of them as numbers, timestamptz read by position, the rest as pg parses them (json: parsed). */
const numberTypes = {
  getTypeParser: (oid: number, format?: 'text' | 'binary') =>
    oid === INT8
      ? Number
      : oid === INT8_ARRAY
        ? int8Numbers
        : oid === TIMESTAMPTZ
          ? parseTimestamptz
          : pg.types.getTypeParser(oid, format),
}

/**
 * A read on the Prisma adapter's own pg pool, its rows mapped once by the caller, which costs a
 * fraction of Prisma's row mapping (decisions 0155, 0175) and about 120–230 µs of server CPU less per
 * call than `$queryRaw`: the store's reads go through it (decision 0262), and `$queryRaw` stays for
 * writes, locks and what a transaction reads. Named like Prisma's statements (statementName; one
 * marked PLANNED_PER_CALL goes unnamed, planned per call). It goes to the client's query log and, inside a traced operation, gets
 * a statement span of its own, as Prisma's statements do. Each call may take another connection; a
 * transaction (or a client without a pool) goes through Prisma, whose rows carry bigints where these
 * carry numbers (the row mappers take both). `conn` may be a read replica's client (db/replicas.ts):
 * a read the replica fails for its own reasons is read again on the primary.
 */
export async function queryPooled<R extends object>(conn: Conn, sql: Prisma.Sql): Promise<R[]> {
  if (!poolOf(conn as Db)) return conn.$queryRaw<R[]>(sql)
  return queryPrepared<R>(conn, preparedText(sql.text), sql.values)
}

/** A statement text with its name, for a caller that builds the text once and sends it with each call's values. */
export type PreparedText = { text: string; name: string }
export const preparedText = (text: string): PreparedText => ({ text, name: statementName(text) })

/** queryPooled for a text built once: no SQL to assemble and no name to look up per call. */
export async function queryPrepared<R extends object>(
  conn: Conn,
  statement: PreparedText,
  values: unknown[],
): Promise<R[]> {
  const pool = poolOf(conn as Db)
  if (!pool) return conn.$queryRawUnsafe<R[]>(statement.text, ...values)
  const { text, name } = statement
  queryLogOf(conn as Db)?.(text)
  const read = async () => {
    try {
      return (await pool.query<R>({ text, values, name, types: numberTypes })).rows
    } catch (error) {
      // A read replica that is down, or whose replay cancelled the statement: the primary answers it.
      const primary = replicaFallback(conn as Db, error)
      if (!primary) throw error
      return queryPrepared<R>(primary, statement, values)
    }
  }
  // No span without a recording one to nest in: tracing off, or a replay outside any operation.
  if (!trace.getActiveSpan()?.isRecording()) return read()
  return tracer.startActiveSpan(
    'parley.db_query',
    { kind: SpanKind.CLIENT, attributes: { 'db.system.name': 'postgresql', 'db.query.text': text } },
    async (span) => {
      try {
        return await read()
      } catch (error) {
        span.setStatus({ code: SpanStatusCode.ERROR })
        throw error
      } finally {
        span.end()
      }
    },
  )
}
