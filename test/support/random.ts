/** A small seeded generator (mulberry32), so a failing scenario can be replayed from its seed. */
export function seededRandom(seed: number) {
  let a = seed >>> 0
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (n: number) => Math.floor(next() * n)
  return {
    next,
    chance: (p: number) => next() < p,
    int,
    pick: <T>(items: readonly T[]): T | undefined => items[int(items.length)],
    subset: <T>(items: readonly T[], p: number) => items.filter(() => next() < p),
  }
}
