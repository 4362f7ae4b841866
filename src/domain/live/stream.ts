/** Async-iterator plumbing for subscription streams, independent of what they carry. */

type Owner = { close(): void }

/** Where a stream's items come from: `pull` resolves with the next one, or null once there is none. */
export type Source<T> = { pull(): Promise<T | null>; stop?(): Promise<unknown> }

/**
 * Runs `source` as a subscription's stream. Not an async generator: a suspended generator keeps the
 * locals of the items before it (the last replayed page, the last event and its loaders) for as long
 * as the subscription idles; an idle stream here holds only its pending pull. A failure while
 * streaming (the database away) becomes the last item (`failure`), so it is masked like any resolver
 * error and the client resumes; the owner is closed however the stream ends. return() closes the
 * owner first, so it does not wait for a next event.
 */
export function pulledStream<T>(owner: Owner, source: Source<T>, failure: (error: Error) => T): AsyncIterableIterator<T> {
  let ended = false
  const end = async (): Promise<IteratorReturnResult<undefined>> => {
    if (!ended) {
      ended = true
      owner.close()
      await source.stop?.()
    }
    return { done: true, value: undefined }
  }
  return {
    async next(): Promise<IteratorResult<T>> {
      if (ended) return { done: true, value: undefined }
      let value: T | null
      try {
        value = await source.pull()
      } catch (error) {
        value = failure(error instanceof Error ? error : new Error(String(error)))
        await end()
        return { done: false, value }
      }
      return value === null ? end() : { done: false, value }
    },
    return: end,
    [Symbol.asyncIterator]() {
      return this
    },
  }
}

/** A source of `replay`'s items up to its end, then of `live`'s; the finished replay is let go. */
export function replayThenLive<T>(replay: AsyncGenerator<T> | null, live: () => Promise<T | null>): Source<T> {
  let replaying = replay
  return {
    async pull() {
      if (replaying) {
        const item = await replaying.next()
        if (!item.done) return item.value
        replaying = null
      }
      return live()
    },
    stop: async () => replaying?.return(undefined),
  }
}

/** pulledStream of an async generator's items (a stream that interleaves its own reads with live events). */
export function guardedStream<T>(owner: Owner, events: () => AsyncGenerator<T>, failure: (error: Error) => T): AsyncIterableIterator<T> {
  return pulledStream(owner, replayThenLive(events(), async () => null), failure)
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
