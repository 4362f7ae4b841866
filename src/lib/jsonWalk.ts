/** One step of a path into JSON: an object key or an array index. */
export type JsonPath = (string | number)[]

type Entry = { value: unknown; depth: number; key: string | number | null; parent: Entry | null }

const pathOf = (entry: Entry): JsonPath => {
  const path: JsonPath = []
  for (let e: Entry | null = entry; e?.key != null; e = e.parent) path.unshift(e.key)
  return path
}

/**
 * Walks every value inside `root` (the root at depth 0, an object's keys as strings of their own,
 * `isKey` true) and returns the path of the first one `stop` accepts, or null. A loop over an
 * explicit stack, not recursion: input nested 100,000 levels deep costs heap, never the call stack.
 */
export function findInJson(
  root: unknown,
  stop: (value: unknown, depth: number, isKey: boolean) => boolean,
): JsonPath | null {
  const stack: Entry[] = [{ value: root, depth: 0, key: null, parent: null }]
  for (let entry = stack.pop(); entry; entry = stack.pop()) {
    const { value, depth } = entry
    if (stop(value, depth, false)) return pathOf(entry)
    if (typeof value !== 'object' || value === null) continue
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--)
        stack.push({ value: value[i], depth: depth + 1, key: i, parent: entry })
      continue
    }
    for (const [key, child] of Object.entries(value)) {
      const childEntry = { value: child, depth: depth + 1, key, parent: entry }
      if (stop(key, depth + 1, true)) return pathOf(childEntry)
      stack.push(childEntry)
    }
  }
  return null
}
