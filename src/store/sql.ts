import { Prisma } from '../generated/prisma/client.ts'
import type { Db, Tx } from '../db/client.ts'

export { Prisma }
/** Store functions take either the client or a transaction; both can run raw SQL. */
export type Conn = Db | Tx

/** A unique-constraint violation, whether raised by a Prisma model call (P2002) or raw SQL (P2010). */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  if (!(error instanceof Prisma.PrismaClientKnownRequestError)) return false
  const cause = (error.meta?.driverAdapterError as { cause?: { kind?: string; originalMessage?: string } } | undefined)?.cause
  const unique = error.code === 'P2002' || cause?.kind === 'UniqueConstraintViolation'
  return unique && (!constraint || (cause?.originalMessage ?? '').includes(constraint))
}

export const bigintArray = (ids: readonly number[]) => Prisma.sql`${ids.map(BigInt)}::bigint[]`
