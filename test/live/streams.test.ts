import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { describe, expect, it } from 'vitest'
import { runsThenLive } from '../../src/domain/live/stream.ts'

// A full collection on demand, so the test can tell whether the stream still holds an item.
setFlagsFromString('--expose-gc')
const collectGarbage = runInNewContext('gc') as () => void

type Item = { n: number; rows: number[] }

describe('runsThenLive', () => {
  it('hands out the replayed runs in order, then the live items', async () => {
    async function* replay() {
      yield [
        { n: 1, rows: [] },
        { n: 2, rows: [] },
      ]
      yield [{ n: 3, rows: [] }]
    }
    const live = [{ n: 4, rows: [] }, null]
    const source = runsThenLive<Item>(replay(), async () => live.shift() ?? null)
    const seen: number[] = []
    for (let item = await source.pull(); item; item = source.take?.() ?? (await source.pull())) seen.push(item.n)
    expect(seen).toEqual([1, 2, 3, 4])
  })

  it('lets a run go once its items are handed out, while it waits for live items', async () => {
    let item: Item | null = { n: 1, rows: Array.from({ length: 1000 }, (_, i) => i) }
    const handedOut = new WeakRef(item)
    async function* replay() {
      yield [item!]
    }
    const source = runsThenLive<Item>(replay(), () => new Promise<never>(() => {}))
    expect((await source.pull())?.n).toBe(1)
    item = null
    // The stream now waits for a live item that never comes, as an idle subscription does.
    void source.pull()
    await new Promise((resolve) => setImmediate(resolve))
    collectGarbage()
    expect(handedOut.deref()).toBeUndefined()
    expect(source.take?.()).toBeUndefined()
  })
})
