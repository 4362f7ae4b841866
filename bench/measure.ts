/** Timing helpers shared by the bench process and its client process. */

/** Runs `count` tasks with `concurrency` workers; returns tasks per second. */
export async function throughput(
  count: number,
  concurrency: number,
  task: (i: number) => Promise<unknown>,
): Promise<number> {
  let next = 0
  const started = performance.now()
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < count; i = next++) await task(i)
    }),
  )
  return count / ((performance.now() - started) / 1000)
}

/** Latencies in ms of `count` sequential calls. */
export async function latencies(count: number, task: (i: number) => Promise<unknown>): Promise<number[]> {
  const out: number[] = []
  for (let i = 0; i < count; i++) {
    const t = performance.now()
    await task(i)
    out.push(performance.now() - t)
  }
  return out
}

export const median = (xs: number[]) => percentile(xs, 50)
export function percentile(xs: number[], p: number): number {
  const sorted = [...xs].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!
}

/**
 * `runs` samples of each measurement, alternated (a, b, …, a, b, …) after `warmups` runs of each, so a
 * drift in the machine's speed during the run hits every side alike; with `reverseEveryOther` each
 * second round runs them in reverse order (b, a), so neither side always runs right after the other.
 */
export async function alternatingSamples(
  runs: number,
  measurements: (() => Promise<number>)[],
  opts: { warmups?: number; reverseEveryOther?: boolean } = {},
): Promise<number[][]> {
  for (const m of measurements) for (let i = 0; i < (opts.warmups ?? 1); i++) await m()
  const samples = measurements.map(() => [] as number[])
  for (let i = 0; i < runs; i++) {
    const order = [...measurements.keys()]
    if (opts.reverseEveryOther && i % 2) order.reverse()
    for (const j of order) samples[j]!.push(await measurements[j]!())
  }
  return samples
}

/** Medians of alternatingSamples after one warm-up of each (`reverseEveryOther` as there). */
export async function alternatingMedians(
  runs: number,
  measurements: (() => Promise<number>)[],
  opts: { reverseEveryOther?: boolean } = {},
): Promise<number[]> {
  return (await alternatingSamples(runs, measurements, opts)).map(median)
}

/** alternatingMedians of two measurements. */
export async function pairedMedians(
  runs: number,
  a: () => Promise<number>,
  b: () => Promise<number>,
): Promise<[number, number]> {
  const [ma, mb] = await alternatingMedians(runs, [a, b])
  return [ma!, mb!]
}
