/** Async-iterator plumbing for subscription streams, independent of what they carry. */

type Owner = { close(): void }

/**
 * Where a stream's items come from: `pull` resolves with the next one, or null once there is none;
 * `take`, if there, answers an item it already holds (undefined: none), which the stream hands out
 * without awaiting `pull`.
 */
export type Source<T> = { pull(): Promise<T | null>; take?(): T | undefined; stop?(): Promise<unknown> }

/**
 * Runs `source` as a subscription's stream. Not an async generator: a suspended generator keeps the
 * locals of the items before it (the last replayed page, the last event and its loaders) for as long
 * as the subscription idles; an idle stream here holds only its pending pull (and, a class, no
 * closures of its own). A failure while streaming (the database away) becomes the last item
 * (`failure`), so it is masked like any resolver error and the client resumes; the owner is closed
 * however the stream ends. return() closes the owner first, so it does not wait for a next event.
 */
class PulledStream<T> implements AsyncIterableIterator<T> {
  private ended = false

  constructor(
    private readonly owner: Owner,
    private readonly source: Source<T>,
    private readonly failure: (error: Error) => T,
  ) {}

  next(): Promise<IteratorResult<T>> {
    const held = this.ended ? undefined : this.source.take?.()
    return held === undefined ? this.pulled() : Promise.resolve({ done: false, value: held })
  }

  private async pulled(): Promise<IteratorResult<T>> {
    if (this.ended) return { done: true, value: undefined }
    let value: T | null
    try {
      value = await this.source.pull()
    } catch (error) {
      value = this.failure(error instanceof Error ? error : new Error(String(error)))
      await this.return()
      return { done: false, value }
    }
    return value === null ? this.return() : { done: false, value }
  }

  async return(): Promise<IteratorReturnResult<undefined>> {
    if (!this.ended) {
      this.ended = true
      this.owner.close()
      await this.source.stop?.()
    }
    return { done: true, value: undefined }
  }

  [Symbol.asyncIterator]() {
    return this
  }
}

export const pulledStream = <T>(
  owner: Owner,
  source: Source<T>,
  failure: (error: Error) => T,
): AsyncIterableIterator<T> => new PulledStream(owner, source, failure)

/** A source of `replay`'s items up to its end, then of `live`'s; the finished replay is let go. */
class ReplayThenLive<T> implements Source<T> {
  constructor(
    private replaying: AsyncGenerator<T> | null,
    private readonly live: () => Promise<T | null>,
  ) {}

  async pull(): Promise<T | null> {
    if (this.replaying) {
      const item = await this.replaying.next()
      if (!item.done) return item.value
      this.replaying = null
    }
    return this.live()
  }

  async stop(): Promise<void> {
    await this.replaying?.return(undefined)
  }
}

export const replayThenLive = <T>(replay: AsyncGenerator<T> | null, live: () => Promise<T | null>): Source<T> =>
  new ReplayThenLive(replay, live)

/**
 * replayThenLive for a replay read in runs (a page of events): the items of a run are handed out
 * straight from it (`take`), instead of each passing an async generator and two awaits (a resume
 * replay hands out thousands in a row). A pull while the next run is read waits for it, so
 * overlapping calls still take the items in order.
 */
class RunsThenLive<T> implements Source<T> {
  private run: readonly T[] = []
  private at = 0
  private reading: Promise<void> | null = null

  constructor(
    private replaying: AsyncGenerator<readonly T[]> | null,
    private readonly live: () => Promise<T | null>,
  ) {}

  take(): T | undefined {
    if (this.at >= this.run.length) return undefined
    const item = this.run[this.at++]
    // A run handed out is let go: kept, an idle stream would hold its last events and their loaders.
    if (this.at === this.run.length) [this.run, this.at] = [[], 0]
    return item
  }

  async pull(): Promise<T | null> {
    for (;;) {
      const held = this.take()
      if (held !== undefined) return held
      if (!this.replaying) return this.live()
      // The read itself puts the run in place, before any waiting pull goes on.
      this.reading ??= this.replaying.next().then(
        (read) => {
          this.reading = null
          if (read.done) this.replaying = null
          else [this.run, this.at] = [read.value, 0]
        },
        (error: unknown) => {
          this.reading = null
          throw error
        },
      )
      await this.reading
    }
  }

  async stop(): Promise<void> {
    this.run = []
    await this.replaying?.return(undefined)
  }
}

export const runsThenLive = <T>(
  replay: AsyncGenerator<readonly T[]> | null,
  live: () => Promise<T | null>,
): Source<T> => new RunsThenLive(replay, live)

/** pulledStream of an async generator's items (a stream that interleaves its own reads with live events). */
export function guardedStream<T>(
  owner: Owner,
  events: () => AsyncGenerator<T>,
  failure: (error: Error) => T,
): AsyncIterableIterator<T> {
  return pulledStream(
    owner,
    replayThenLive(events(), async () => null),
    failure,
  )
}

/** Runs the opening `work` of a subscription: marks it open when done, or closes it if opening fails. */
export async function opening<T>(owner: Owner & { markOpened(): void }, work: () => Promise<T>): Promise<T> {
  try {
    const result = await work()
    owner.markOpened()
    return result
  } catch (error) {
    owner.close()
    throw error
  }
}
