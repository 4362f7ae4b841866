/** Relay connections as the domain hands them to the schema layer (sizes: input.ts; cursors: cursors.ts). */
export type PageArgs = { first?: number | null; after?: string | null; last?: number | null; before?: string | null }
export type Edge<T> = { cursor: string; node: T }
export type PageInfo = { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null }
export type Connection<T> = { edges: Edge<T>[]; pageInfo: PageInfo }

/** A forward page from `limit + 1` fetched rows. */
export function forwardPage<T>(rows: T[], limit: number, cursorOf: (t: T) => string, hasPreviousPage: boolean): Connection<T> {
  return toConnection(rows.slice(0, limit), cursorOf, { hasNextPage: rows.length > limit, hasPreviousPage })
}

/** Each edge's cursor is encoded when first read (an own, enumerable getter: spreads copy it): most queries read one or two of a page's cursors. */
export function toConnection<T>(nodes: T[], cursorOf: (t: T) => string, more: { hasNextPage: boolean; hasPreviousPage: boolean }): Connection<T> {
  const edges = nodes.map((node): Edge<T> => {
    let cursor: string | undefined
    return {
      node,
      get cursor() {
        return (cursor ??= cursorOf(node))
      },
    }
  })
  return { edges, pageInfo: { ...more, startCursor: edges[0]?.cursor ?? null, endCursor: edges.at(-1)?.cursor ?? null } }
}
