import { badInput } from '../errors.ts'
import { LIMITS } from './limits.ts'

export type PageArgs = { first?: number | null; after?: string | null; last?: number | null; before?: string | null }
export type Edge<T> = { cursor: string; node: T }
export type PageInfo = { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null }
export type Connection<T> = { edges: Edge<T>[]; pageInfo: PageInfo }

export function checkPageSize(size: number | null | undefined, field: string): number {
  if (size === null || size === undefined) return LIMITS.defaultPageSize
  if (!Number.isInteger(size) || size < 0 || size > LIMITS.pageSize) {
    throw badInput(`${field} must be between 0 and ${LIMITS.pageSize}`, field)
  }
  return size
}

/** Cursors are opaque to clients: base64url("<prefix>:<value>"). */
export function encodeCursor(prefix: string, value: string | number): string {
  return Buffer.from(`${prefix}:${value}`, 'utf8').toString('base64url')
}

export function decodeCursor(cursor: string, prefix: string, field: string): string {
  const raw = Buffer.from(cursor, 'base64url').toString('utf8')
  if (!raw.startsWith(`${prefix}:`) || Buffer.from(raw, 'utf8').toString('base64url') !== cursor.replace(/=+$/, '')) {
    throw badInput(`${field} is not a valid cursor`, field)
  }
  return raw.slice(prefix.length + 1)
}

export function decodeIntCursor(cursor: string | null | undefined, prefix: string, field: string): number | null {
  if (cursor === null || cursor === undefined) return null
  const value = decodeCursor(cursor, prefix, field)
  if (!/^(0|[1-9][0-9]{0,15})$/.test(value)) throw badInput(`${field} is not a valid cursor`, field)
  return Number(value)
}

/** A forward page from `limit + 1` fetched rows. */
export function forwardPage<T>(rows: T[], limit: number, cursorOf: (t: T) => string, hasPreviousPage: boolean): Connection<T> {
  return toConnection(rows.slice(0, limit), cursorOf, { hasNextPage: rows.length > limit, hasPreviousPage })
}

export function toConnection<T>(nodes: T[], cursorOf: (t: T) => string, more: { hasNextPage: boolean; hasPreviousPage: boolean }): Connection<T> {
  const edges = nodes.map((node) => ({ cursor: cursorOf(node), node }))
  return { edges, pageInfo: { ...more, startCursor: edges[0]?.cursor ?? null, endCursor: edges.at(-1)?.cursor ?? null } }
}
