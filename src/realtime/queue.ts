/** What `take` answers once nothing more will come: the queue overflowed, or it was closed. */
export type QueueEnd = { end: 'overflow' | 'closed' }

/**
 * A subscription's waiting events, at most `capacity`. One more than that drops them all and ends
 * the queue with 'overflow' (the subscriber resumes with sincePts), so a consumer that stops reading
 * never holds more than `capacity` events in memory.
 */
export class BoundedQueue<T> {
  private items: T[] = []
  private head = 0
  private ended: QueueEnd | null = null
  private wake: (() => void) | null = null

  constructor(
    private readonly capacity: number,
    private readonly onOverflow: () => void,
  ) {}

  get size(): number {
    return this.items.length - this.head
  }

  push(item: T): void {
    if (this.ended) return
    if (this.size >= this.capacity) {
      this.finish({ end: 'overflow' })
      this.onOverflow()
      return
    }
    this.items.push(item)
    this.signal()
  }

  close(): void {
    if (!this.ended) this.finish({ end: 'closed' })
  }

  /** The next event, or the end once nothing more will come. */
  async take(): Promise<{ value: T } | QueueEnd> {
    while (!this.size && !this.ended) await new Promise<void>((resolve) => (this.wake = resolve))
    if (this.ended) return this.ended
    const value = this.items[this.head++]!
    // Compact now and then instead of shifting on every take.
    if (this.head > 64 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head)
      this.head = 0
    }
    return { value }
  }

  private finish(end: QueueEnd): void {
    this.ended = end
    this.items = []
    this.head = 0
    this.signal()
  }

  private signal(): void {
    const wake = this.wake
    this.wake = null
    wake?.()
  }
}
