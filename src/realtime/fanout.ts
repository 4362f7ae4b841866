import type { RealtimeEvent } from './events.ts'
import type { Listener, Realtime } from './pubsub.ts'

/** Hands one bus event to the local subscribers of its topic: called once per event, whatever their number. */
export type Emit<S> = (event: RealtimeEvent, subscribers: ReadonlySet<S>, fromUserTopic: boolean) => void

/** The local subscribers of one topic, behind one bus listener. */
export class Fanout<S> {
  readonly subscribers = new Set<S>()
  ready: Promise<void> = Promise.resolve()
  protected readonly listener: Listener = (event) => this.receive(event)

  constructor(
    protected readonly realtime: Realtime,
    readonly topic: string,
    private readonly isUserTopic: boolean,
    private readonly emitTo: Emit<S>,
  ) {}

  start(): this {
    this.ready = this.realtime.listen(this.topic, this.listener)
    return this
  }

  stop(): void {
    this.realtime.unlisten(this.topic, this.listener)
  }

  protected receive(event: RealtimeEvent): void {
    this.emit(event)
  }

  protected emit(event: RealtimeEvent): void {
    if (this.subscribers.size) this.emitTo(event, this.subscribers, this.isUserTopic)
  }
}
