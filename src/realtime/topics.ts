import { userTopic } from './events.ts'
import { Fanout, type Emit } from './fanout.ts'
import { ConversationFeed, type FeedSource } from './feed.ts'
import type { Realtime } from './pubsub.ts'

/**
 * The topics this process listens to, one fan-out each, started with its first local subscriber and
 * stopped with its last (one topic per conversation and one per user, never a global topic).
 */
export class Topics<S> {
  private readonly conversations = new Map<number, ConversationFeed<S>>()
  private readonly users = new Map<number, Fanout<S>>()

  constructor(
    private readonly realtime: Realtime,
    private readonly emit: Emit<S>,
    private readonly source: FeedSource,
  ) {}

  /** Joins the conversation's feed; resolves with the pts after which the feed delivers every change. */
  async joinConversation(subscriber: S, conversationId: number): Promise<number> {
    return (await this.joinConversations(subscriber, [conversationId])).get(conversationId)!
  }

  /**
   * Joins many feeds at once (an inbox or account stream opening over all its conversations): one
   * wait for all of them, not an async step per feed. Resolves with each feed's head; if any fails
   * to listen, those leave again and the first failure is thrown, once the others are ready.
   */
  async joinConversations(subscriber: S, conversationIds: readonly number[]): Promise<Map<number, number>> {
    const feeds = conversationIds.map((id) =>
      this.add(
        this.conversations,
        id,
        subscriber,
        () => new ConversationFeed(this.realtime, id, this.emit, this.source),
      ),
    )
    const settled = await Promise.allSettled(feeds.map((feed) => feed.ready))
    const failed = settled.findIndex((s) => s.status === 'rejected')
    if (failed >= 0) {
      settled.forEach(
        (s, i) => s.status === 'rejected' && this.leave(this.conversations, conversationIds[i]!, subscriber),
      )
      throw (settled[failed] as PromiseRejectedResult).reason
    }
    return new Map(feeds.map((feed) => [feed.conversationId, feed.head]))
  }

  leaveConversation(subscriber: S, conversationId: number): void {
    this.leave(this.conversations, conversationId, subscriber)
  }

  async joinUser(subscriber: S, userId: number): Promise<void> {
    await this.enter(
      this.users,
      userId,
      subscriber,
      () => new Fanout(this.realtime, userTopic(userId), true, this.emit),
    )
  }

  leaveUser(subscriber: S, userId: number): void {
    this.leave(this.users, userId, subscriber)
  }

  /** Every conversation feed reads what it may have missed (the bus was away); see ConversationFeed.catchUp. */
  catchUp(): Promise<void>[] {
    return [...this.conversations.values()].map((feed) =>
      feed.catchUp().catch((error: unknown) => this.source.log('could not catch up a live stream', error)),
    )
  }

  get counts() {
    return { conversationTopics: this.conversations.size, userTopics: this.users.size }
  }

  /** Adds the subscriber to the topic's fan-out (started on first use); leaves again if listening fails. */
  private async enter<F extends Fanout<S>>(
    map: Map<number, F>,
    key: number,
    subscriber: S,
    create: () => F,
  ): Promise<F> {
    const fanout = this.add(map, key, subscriber, create)
    try {
      await fanout.ready
    } catch (error) {
      this.leave(map, key, subscriber)
      throw error
    }
    return fanout
  }

  private add<F extends Fanout<S>>(map: Map<number, F>, key: number, subscriber: S, create: () => F): F {
    let fanout = map.get(key)
    if (!fanout) map.set(key, (fanout = create().start()))
    fanout.subscribers.add(subscriber)
    return fanout
  }

  private leave(map: Map<number, Fanout<S>>, key: number, subscriber: S): void {
    const fanout = map.get(key)
    if (!fanout?.subscribers.delete(subscriber) || fanout.subscribers.size) return
    fanout.stop()
    map.delete(key)
  }
}
