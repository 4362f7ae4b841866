import { conversationTopic, type RealtimeEvent } from './events.ts'
import { Fanout, type Emit } from './fanout.ts'
import type { Realtime } from './pubsub.ts'

export type MessageChange = Extract<RealtimeEvent, { type: 'message' }>

/** Where a feed starts and how it fills a gap: the database, passed in by live delivery. */
export type FeedSource = {
  /** The conversation's newest pts, read once the bus confirmed the topic. */
  startPts(conversationId: number): Promise<number>
  /** The changes with pts in (afterPts, untilPts] as stored (a pts absent belongs to a message changed again later). */
  readGap(conversationId: number, afterPts: number, untilPts: number): Promise<MessageChange[]>
  log(message: string, error?: unknown): void
}

/** How long a feed waits for a missing pts (published late, e.g. by another instance) before reading it from the database. */
const GAP_WAIT_MS = 500

/**
 * A conversation's topic in this process. Message events leave in pts order with no hole: pts are
 * contiguous per conversation and every change publishes one event, so a missing pts is one that
 * is late (another instance published it) or lost (a crash between commit and publish). The feed
 * holds later events for GAP_WAIT_MS, then reads the missing changes from the source.
 */
export class ConversationFeed<S> extends Fanout<S> {
  /** The pts up to which every change has been emitted (or came before this feed started). */
  head = 0
  private early: RealtimeEvent[] | null = []
  private readonly held = new Map<number, MessageChange>()
  private timer: NodeJS.Timeout | null = null
  private filling = false

  constructor(
    realtime: Realtime,
    readonly conversationId: number,
    emit: Emit<S>,
    private readonly source: FeedSource,
  ) {
    super(realtime, conversationTopic(conversationId), false, emit)
  }

  override start(): this {
    this.ready = (async () => {
      await this.realtime.listen(this.topic, this.listener)
      // Read after the bus confirmed the topic: every change past this pts is delivered to the listener.
      this.head = await this.source.startPts(this.conversationId)
      const early = this.early ?? []
      this.early = null
      for (const event of early) this.receive(event)
    })()
    return this
  }

  override stop(): void {
    super.stop()
    if (this.timer) clearTimeout(this.timer)
    this.timer = null
  }

  protected override receive(event: RealtimeEvent): void {
    if (this.early) {
      this.early.push(event)
      return
    }
    if (event.type !== 'message') return this.emit(event)
    if (event.pts <= this.head) return
    this.held.set(event.pts, event)
    this.advance()
  }

  private advance(): void {
    for (let next = this.held.get(this.head + 1); next; next = this.held.get(this.head + 1)) {
      this.held.delete(next.pts)
      this.head = next.pts
      this.emit(next)
    }
    if (!this.held.size && this.timer) {
      clearTimeout(this.timer)
      this.timer = null
    } else if (this.held.size && !this.timer && !this.filling) {
      this.timer = setTimeout(() => void this.fill(), GAP_WAIT_MS)
    }
  }

  /**
   * After the bus was away (Redis reconnected): reads and emits, in order, every change stored past the
   * head, since their events may have been lost and no later event may come to reveal the gap.
   */
  async catchUp(): Promise<void> {
    if (this.early || this.filling) return
    const newest = await this.source.startPts(this.conversationId)
    if (newest <= this.head || this.filling) return
    if (this.timer) clearTimeout(this.timer)
    await this.fill(Math.max(newest, ...this.held.keys()))
  }

  /** Reads the changes still missing up to `until` (the newest held one), then emits everything up to it in order. */
  private async fill(until = Math.max(...this.held.keys())): Promise<void> {
    this.timer = null
    this.filling = true
    try {
      for (const change of await this.source.readGap(this.conversationId, this.head, until)) {
        if (change.pts > this.head && !this.held.has(change.pts)) this.held.set(change.pts, change)
      }
      // Every pts up to `until` is now held, or belongs to a message that changed again later.
      for (let pts = this.head + 1; pts <= until; pts++) {
        const event = this.held.get(pts)
        if (!event) continue
        this.held.delete(pts)
        this.emit(event)
      }
      this.head = Math.max(this.head, until)
    } catch (error) {
      this.source.log('could not fill a gap in a live stream; retrying', error)
    } finally {
      this.filling = false
      if (this.subscribers.size) this.advance()
    }
  }
}
