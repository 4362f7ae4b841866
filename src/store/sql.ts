import { Prisma } from '../generated/prisma/client.ts'
import type { Db, Tx } from '../db/client.ts'

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

export const bigintArray = (ids: readonly number[]) => Prisma.sql`${ids.map(BigInt)}::bigint[]`
