import { Prisma } from '../generated/prisma/client.ts'
import { PLANNED_PER_CALL, type Db, type Tx } from '../db/client.ts'

export { Prisma }
/** Store functions take either the client or a transaction; both can run raw SQL. */
export type Conn = Db | Tx

type DriverCause = { kind?: string; constraint?: { index?: string } }

/**
 * The name of the unique constraint (index) a statement violated, or null for any other error.
 * Read from the driver adapter's structured cause (PostgreSQL's error field), never from message text.
 */
export function violatedUniqueConstraint(error: unknown): string | null {
  if (!(error instanceof Prisma.PrismaClientKnownRequestError)) return null
  const cause = (error.meta?.driverAdapterError as { cause?: DriverCause } | undefined)?.cause
  return cause?.kind === 'UniqueConstraintViolation' ? (cause.constraint?.index ?? null) : null
}

/**
 * Put first in a statement whose kept plan would go wrong as a table grows: PostgreSQL plans it on
 * every call, from the arguments and the statistics of the moment. Kept plans of the write path
 * were made while the tables were small and stayed there: the idempotency lookup hash-joined a
 * sequential scan of every message, the counter updates and the foreign-key checks scanned the
 * conversation and member rows (one live row each, a dead version per write until vacuum), so every
 * send got slower with each one stored (bench scenario 2 fell from 2× to 0.4× the raw baseline over
 * 12,000 sends into one conversation). lockConversations, the first statement of every write that
 * takes a seq, is marked so and sets plan_cache_mode for the rest of its transaction.
 */
export const plannedPerCall = Prisma.raw(PLANNED_PER_CALL)

/** A deadlock or serialization failure (40P01, 40001): PostgreSQL rolled the transaction back, and running it again may succeed. */
export function isWriteConflict(error: unknown): boolean {
  if (!(error instanceof Prisma.PrismaClientKnownRequestError)) return false
  const cause = (error.meta?.driverAdapterError as { cause?: DriverCause } | undefined)?.cause
  return error.code === 'P2034' || cause?.kind === 'TransactionWriteConflict'
}

type ArrayElement = string | number | boolean | null

const element = (v: ArrayElement) =>
  v === null
    ? 'NULL'
    : typeof v === 'string'
      ? `"${v.replace(/["\\]/g, '\\$&')}"`
      : typeof v === 'boolean'
        ? v
          ? 't'
          : 'f'
        : String(v)

/**
 * An array parameter as ONE PostgreSQL array literal ('{1,"a\\"b",NULL}'), cast in the statement: Prisma
 * and pg then pass one string, where a JS array costs a serialization round (to JSON and back) and an
 * escape per element, which a send batch's arrays (a value per message) paid on every call.
 */
export const arrayLiteral = (values: readonly ArrayElement[]): string => `{${values.map(element).join(',')}}`

/**
 * A timestamp as epoch milliseconds, for a value read inside JSON: Date takes it without parsing
 * (the same instant; a Date keeps milliseconds, as it does of the text form). date_part's double,
 * not extract's numeric, which costs about twice as much per value; a double holds every
 * microsecond of these dates to well under a millisecond, so the floor is exact.
 */
export const epochMs = (column: string) => Prisma.raw(`floor(date_part('epoch', ${column}) * 1000)`)

/**
 * A positive integer written into the statement's text, not sent as a parameter (a LIMIT, a bound):
 * a generic plan that knows it costs like a custom one, so PostgreSQL keeps it, where with LIMIT $n it
 * assumes a tenth of every input is read and plans the statement again on every call.
 */
export function limitLiteral(value: number): Prisma.Sql {
  if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`limit ${value}`)
  return Prisma.raw(String(value))
}

export const bigintArray = (ids: readonly number[]) => Prisma.sql`${arrayLiteral(ids)}::bigint[]`

/**
 * A value no plan may depend on: an InitPlan, `(SELECT $n)`. PostgreSQL plans a named statement's
 * first five calls for their values and keeps the generic plan only if it looks no dearer than those
 * did; for a short read by a reader and a few ids, the plans made for the values looked cheaper and
 * the statement was planned on every call, often longer than it ran (decision 0263). With its values
 * as InitPlans every plan costs the same, so the generic one is kept, whoever calls first.
 */
export const planIndependent = (id: number) => Prisma.sql`(SELECT ${id}::bigint)`
/** planIndependent for an id list (a bigint[] for unnest or `= ANY`). */
export const planIndependentIds = (ids: readonly number[]) => Prisma.sql`(SELECT ${bigintArray(ids)})::bigint[]`
