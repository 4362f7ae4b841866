import type { Db } from '../../db/client.ts'
import { DomainError, notFound } from '../core/errors.ts'
import { BoundedQueue } from '../../realtime/queue.ts'
import type { Viewer } from '../core/app.ts'
import { createLoaders, type Loaders } from '../history/loaders.ts'
import type { Hub } from './hub.ts'
import type { Delivery } from './payloads.ts'
import { alertRule } from './alertRule.ts'
import { conversationVerdict, followsAll, mayConcern, type Scope } from './rules.ts'
import type { ConversationBound, Wave } from './wave.ts'
import { StreamOrder } from './streamOrder.ts'
import { fromUserTopic, RemindersDelivered } from './userTopic.ts'

/**
 * One GraphQL subscription: joins topics, replays what it missed, then turns the waves its topics
 * queue into deliveries as its viewer may see them (rules.ts). `delivered` is the pts it has
 * delivered per conversation it follows.
 */
export class Subscription {
  readonly queue: BoundedQueue<Wave>
  readonly delivered = new Map<number, number>()
  private readonly joined = new Set<number>()
  readonly reminders = new RemindersDelivered()
  private readonly streamOrder = new StreamOrder()
  opened = false
  private closed = false

  constructor(
    private readonly hub: Hub,
    readonly viewer: Viewer,
    readonly scope: Scope,
  ) {
    this.queue = new BoundedQueue(hub.realtime.subscriberBuffer, () => this.leaveAll())
    hub.open.add(this)
  }

  push(wave: Wave): void {
    this.queue.push(wave)
  }

  /** Listens to the viewer's topic (a closed subscription joins nothing: it could never leave again). */
  async listenUser(): Promise<void> {
    if (!this.closed) await this.hub.topics.joinUser(this, this.viewer.userId)
  }

  /** Joins a conversation's feed; resolves with the feed's position (see Topics.joinConversation). */
  async join(conversationId: number): Promise<number> {
    return (await this.joinAll([conversationId])).get(conversationId) ?? 0
  }

  /** Joins the feeds of these conversations together (Topics.joinConversations); resolves with their positions. */
  async joinAll(conversationIds: readonly number[]): Promise<Map<number, number>> {
    if (this.closed) return new Map()
    // Recorded before the join resolves, so a close meanwhile leaves these feeds too.
    for (const id of conversationIds) this.joined.add(id)
    const heads = await this.hub.topics.joinConversations(this, conversationIds)
    for (const [id, head] of heads) if (!this.delivered.has(id)) this.delivered.set(id, head)
    return heads
  }

  leave(conversationId: number): void {
    this.joined.delete(conversationId)
    this.delivered.delete(conversationId)
    this.hub.topics.leaveConversation(this, conversationId)
  }

  private leaveAll(): void {
    for (const id of [...this.joined]) this.leave(id)
    this.hub.topics.leaveUser(this, this.viewer.userId)
  }

  markOpened(): void {
    if (this.closed) return
    this.opened = true
    this.hub.presence.connected(this.viewer.userId)
    this.hub.changed()
  }

  close(): void {
    if (this.closed) return
    this.closed = true
    this.queue.close()
    this.leaveAll()
    this.hub.open.delete(this)
    if (this.opened) this.hub.presence.disconnected(this.viewer.userId)
    this.hub.changed()
  }

  private get db(): Db {
    return this.hub.db
  }

  /** A loader set of the viewer's own, or for a live event the one its wave shares with the other subscribers. */
  loaders(wave?: Wave): Loaders {
    return wave ? wave.loadersFor(this.db, this.viewer) : createLoaders(this.db, this.viewer)
  }

  /**
   * The next live event, or null once there is none: the queue closed, or the stream ended with an
   * error (RESYNC_REQUIRED on overflow, a lost conversation), which closes the subscription. Not a
   * generator, so an idle subscription holds nothing of the events before (see pulledStream).
   */
  async nextLive(): Promise<Delivery | null> {
    while (!this.closed) {
      const next = await this.queue.take()
      if ('end' in next) {
        if (next.end === 'closed') return null
        this.hub.observer.slowConsumerDropped()
        return this.ending(
          this.fail(
            new DomainError('RESYNC_REQUIRED', 'this subscription fell too far behind; subscribe again with sincePts'),
          ),
        )
      }
      const wave = next.value
      const delivery = wave.fromUserTopic ? await fromUserTopic(this, wave) : await this.fromConversation(wave)
      if (delivery) return delivery.payload.typename === 'Error' ? this.ending(delivery) : delivery
    }
    return null
  }

  private ending(delivery: Delivery): Delivery {
    this.close()
    return delivery
  }

  fail(error: Error): Delivery {
    return { payload: { typename: 'Error', error }, loaders: this.loaders() }
  }

  /** The viewer is no longer a member: a conversation stream ends with NOT_FOUND, the inbox just stops listening there. */
  lostAccess(conversationId: number): Delivery | null {
    if (followsAll(this.scope)) {
      this.leave(conversationId)
      return null
    }
    return this.fail(notFound('Conversation'))
  }

  private async fromConversation(wave: Wave): Promise<Delivery | null> {
    const event = wave.event as ConversationBound
    const conversationId = event.conversationId
    if (!mayConcern(event, this.viewer.userId, this.delivered.get(conversationId))) return null
    const reads = await wave.load(this.db)
    const member = reads.members.get(this.viewer.userId)
    const verdict = conversationVerdict(event, member, reads)
    if (verdict === 'lostAccess') return this.lostAccess(conversationId)
    if (event.type === 'message') this.delivered.set(conversationId, event.pts)
    if (verdict === 'hidden') return null
    const loaders = this.loaders(wave)
    switch (event.type) {
      case 'message': {
        loaders.conversations.prime(conversationId, { conversation: reads.conversation!, member: member!.member })
        loaders.messages.prime(reads.message!, reads.message)
        if (event.kind === 'STREAM_ENDED') this.streamOrder.ended(event)
        const { userId, visibleFromSeq } = member!.member
        const alerted = {
          userId,
          visibleFromSeq,
          doNotDisturbUntil: member!.doNotDisturbUntil,
          followsThread: member!.followsThread,
        }
        const alert = alertRule.alerts(event.kind, reads.message!, alerted, new Date())
        return {
          payload: { typename: 'MessageEvent', kind: event.kind, pts: event.pts, message: reads.message!, alert },
          loaders,
          view: { key: alert ? 'alert' : 'quiet', scope: wave.views },
        }
      }
      case 'read':
        return {
          payload: { typename: 'ReadEvent', conversationId, userId: event.userId, lastReadSeq: event.lastReadSeq },
          loaders,
          view: { key: '', scope: wave.views },
        }
      case 'typing':
        return {
          payload: {
            typename: 'TypingEvent',
            conversationId,
            userId: event.userId,
            expiresAt: new Date(event.expiresAt),
            status: event.status ?? null,
          },
          loaders,
          view: { key: '', scope: wave.views },
        }
      case 'signal':
        return {
          payload: {
            typename: 'SignalEvent',
            conversationId,
            userId: event.userId,
            signalType: event.signalType,
            payload: event.payload,
            sentAt: new Date(event.sentAt),
          },
          loaders,
          view: { key: '', scope: wave.views },
        }
      case 'stream': {
        const key = { conversationId, seq: event.seq }
        if (!this.streamOrder.accepts(key, event.sequence)) return null
        const { sequence, delta, text } = event
        return {
          payload: { typename: 'MessageStreamEvent', key, sequence, delta, text },
          loaders,
          view: { key: '', scope: wave.views },
        }
      }
    }
  }
}
