/** Async-iterator plumbing for subscription streams, independent of what they carry. */

type Owner = { close(): void }

/**
 * Runs `events` as a subscription's stream. A failure while streaming (the database away) becomes
 * the last item (`failure`), so it is masked like any resolver error and the client resumes; the
 * owner is closed however the stream ends. return() closes the owner first, so it does not wait for
 * a next event.
 */
export function guardedStream<T>(owner: Owner, events: () => AsyncGenerator<T>, failure: (error: Error) => T): AsyncIterableIterator<T> {
  async function* guarded(): AsyncGenerator<T> {
    try {
      yield* events()
    } catch (error) {
      yield failure(error instanceof Error ? error : new Error(String(error)))
    } finally {
      owner.close()
    }
  }
  const body = guarded()
  return {
    next: () => body.next(),
    async return() {
      owner.close()
      return body.return(undefined)
    },
    async throw(error: unknown) {
      owner.close()
      return body.throw(error)
    },
    [Symbol.asyncIterator]() {
      return this
    },
  }
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
