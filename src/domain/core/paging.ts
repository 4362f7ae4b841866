/** Relay connections as the domain hands them to the schema layer (sizes: input.ts; cursors: cursors.ts). */
export type PageArgs = { first?: number | null; after?: string | null; last?: number | null; before?: string | null }
type Edge<T> = { cursor: string; node: T }
export type PageInfo = {
  hasNextPage: boolean
  hasPreviousPage: boolean
  startCursor: string | null
  endCursor: string | null
}
export type Connection<T> = { edges: Edge<T>[]; pageInfo: PageInfo }

/** A forward page from `limit + 1` fetched rows. */
export function forwardPage<T>(
  rows: T[],
  limit: number,
  cursorOf: (t: T) => string,
  hasPreviousPage: boolean,
): Connection<T> {
  return toConnection(rows.slice(0, limit), cursorOf, { hasNextPage: rows.length > limit, hasPreviousPage })
}

/**
 * An edge whose cursor is encoded when first read: most queries read one or two of a page's cursors.
 * The getter is on the prototype (an object literal with a getter of its own costs more to create
 * than the encoding), so a spread of an edge leaves its cursor out: copy it by name.
 */
class LazyEdge<T> implements Edge<T> {
  #cursor: string | undefined
  constructor(
    readonly node: T,
    private readonly cursorOf: (t: T) => string,
  ) {}

  get cursor(): string {
    return (this.#cursor ??= this.cursorOf(this.node))
  }
}

export function toConnection<T>(
  nodes: T[],
  cursorOf: (t: T) => string,
  more: { hasNextPage: boolean; hasPreviousPage: boolean },
): Connection<T> {
  const edges = nodes.map((node) => new LazyEdge(node, cursorOf))
  return {
    edges,
    pageInfo: { ...more, startCursor: edges[0]?.cursor ?? null, endCursor: edges.at(-1)?.cursor ?? null },
  }
}
