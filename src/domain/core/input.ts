import { badInput } from './errors.ts'
import { LIMITS } from './limits.ts'

/**
 * The integers clients pass, under one convention (README "Limits"):
 * - a connection's page (`first`/`last` of a Relay connection): 0..100, 20 when omitted;
 * - a window or batch that always answers something (`messagesAround.count`, `changes.first`): 1..100
 *   (`sync.first`: 1..500, the batch a device catches up with);
 * - a position (`seq`, `sincePts`): a non-negative safe integer.
 * Anything else is BAD_USER_INPUT naming the argument.
 */

function inRange(value: number, field: string, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max)
    throw badInput(`${field} must be between ${min} and ${max}`, field)
  return value
}

export const pageSize = (size: number | null | undefined, field: string): number =>
  size == null ? LIMITS.defaultPageSize : inRange(size, field, 0, LIMITS.pageSize)

/** `fallback` is the argument's default, for a client that passes null explicitly. */
export const windowSize = (size: number | null | undefined, field: string, fallback: number): number =>
  inRange(size ?? fallback, field, 1, LIMITS.pageSize)

/** Query.sync's batch: 1..500 changes. */
export const syncBatchSize = (size: number | null | undefined, field: string): number =>
  inRange(size ?? LIMITS.defaultSyncBatch, field, 1, LIMITS.syncBatch)

export function position(value: number, field: string): number {
  if (!Number.isSafeInteger(value) || value < 0) throw badInput(`${field} must be a non-negative integer`, field)
  return value
}

export const optionalPosition = (value: number | null | undefined, field: string): number | null =>
  value == null ? null : position(value, field)
