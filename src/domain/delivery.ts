import DataLoader from 'dataloader'
import type { Db } from '../db/client.ts'
import { DomainError, badInput, notFound } from '../errors.ts'
import { parseId, type MessageKey } from '../ids.ts'
import { conversationTopic, userTopic, type MessageEventKind, type RealtimeEvent } from '../realtime/events.ts'
import type { Listener, Realtime } from '../realtime/pubsub.ts'
import { BoundedQueue } from '../realtime/queue.ts'
import { listChanges } from '../store/changes.ts'
import { findConversationsForUser, type ConversationAccess } from '../store/conversations.ts'
import { findChangeKeys, findDeliveryMembers, findLastPts, findMessage, listMemberConversationIds, type DeliveryMember } from '../store/delivery.ts'
import type { ConversationRecord, MessageRecord, MessageStatus, UserRecord } from '../store/records.ts'
import { accessConversation } from './access.ts'
import type { App, Viewer } from './app.ts'
import { createLoaders, type Loaders } from './loaders.ts'
import { viewerStateOf, type ViewerState } from './userActions.ts'

/**
 * Live delivery (docs/realtime.md). Per process, one bus listener per topic fans events out to the
 * local subscriptions. A conversation's message events pass a per-process feed that puts them in
 * pts order without holes; each subscription then resolves every event as its viewer may see it,
 * from reads that run once per event for all local subscribers (the "wave").
 */

/** A subscription's GraphQL payload; `Error` ends the stream with that error (masked unless a DomainError). */
export type EventPayload =
  | { typename: 'MessageEvent'; kind: MessageEventKind; pts: number; message: MessageRecord }
  | { typename: 'ReadEvent'; conversationId: number; userId: number; lastReadSeq: number }
  | { typename: 'TypingEvent'; conversationId: number; userId: number; expiresAt: Date }
  | { typename: 'ReminderDueEvent'; message: MessageRecord; remindAt: Date }
  | { typename: 'ConversationJoinedEvent'; conversation: ConversationAccess }
  | { typename: 'MessageActionEvent'; key: MessageKey; state: ViewerState }
  | { typename: 'Error'; error: Error }

/** One event for one subscriber, with the loaders its fields resolve through (primed from the shared reads). */
export type Delivery = { payload: EventPayload; loaders: Loaders }
/** Consecutive events for one subscriber that share their loaders (a replayed page, or one live event). */
export type DeliveryBatch = { payloads: EventPayload[]; loaders: Loaders }

const batchOf = (delivery: Delivery): DeliveryBatch => ({ payloads: [delivery.payload], loaders: delivery.loaders })

/** Replay reads the missed changes this many at a time. */
const REPLAY_PAGE = 100
/** How long a feed waits for a missing pts (published late, e.g. by another instance) before reading it from the database. */
const GAP_WAIT_MS = 500

type MessageChange = Extract<RealtimeEvent, { type: 'message' }>
type ConversationBound = Extract<RealtimeEvent, { type: 'message' | 'read' | 'typing' }>

/** What a stored message's latest change was, for replayed and gap-filled events. */
const kindOf = (m: { status: MessageStatus; edited: boolean }): MessageEventKind =>
  m.status === 'RECALLED' ? 'RECALLED' : m.edited ? 'EDITED' : 'ADDED'

type WaveReads = { members: Map<number, DeliveryMember>; message: MessageRecord | null; conversation: ConversationRecord | null }

/**
 * One bus event on its way to every local subscriber of its topic. The reads it needs (the message
 * row, the conversation row, the subscribers' membership and visibility, the users it names) run
 * once for all of them, the first time any subscriber asks.
 */
class Wave {
  private reads: Promise<WaveReads> | null = null
  private users: DataLoader<number, UserRecord | null> | null = null

  constructor(
    readonly event: RealtimeEvent,
    readonly fromUserTopic: boolean,
    private readonly userIds: readonly number[],
  ) {}

  /** Membership (and for a message, visibility) of the subscribers, with the rows they share. */
  load(db: Db): Promise<WaveReads> {
    return (this.reads ??= loadWaveReads(db, this.event as ConversationBound, this.userIds))
  }

  /** A users loader shared by every subscriber's resolution of this event (one batch, one cache). */
  sharedUsers(db: Db): DataLoader<number, UserRecord | null> {
    return (this.users ??= createLoaders(db, null).users)
  }
}

async function loadWaveReads(db: Db, event: ConversationBound, userIds: readonly number[]): Promise<WaveReads> {
  const { conversationId } = event
  const seq = event.type === 'message' ? event.seq : null
  const [members, message, conversation] = await Promise.all([
    findDeliveryMembers(db, conversationId, userIds, seq),
    seq === null ? null : findMessage(db, { conversationId, seq }),
    // The conversation row alone (user 0 has no membership); each subscriber pairs it with its own member row.
    seq === null ? null : findConversationsForUser(db, [conversationId], 0).then((found) => found[0]?.conversation ?? null),
  ])
  return { members: new Map(members.map((m) => [m.member.userId, m])), message, conversation }
}

/** The local subscriptions of one topic, behind one bus listener. */
class Fanout {
  readonly subscriptions = new Set<Subscription>()
  ready: Promise<void> = Promise.resolve()
  protected readonly listener: Listener = (event) => this.receive(event)

  constructor(
    protected readonly hub: Hub,
    readonly topic: string,
    private readonly isUserTopic: boolean,
  ) {}

  start(): this {
    this.ready = this.hub.realtime.listen(this.topic, this.listener)
    return this
  }

  stop(): void {
    this.hub.realtime.unlisten(this.topic, this.listener)
  }

  protected receive(event: RealtimeEvent): void {
    this.emit(event)
  }

  protected emit(event: RealtimeEvent): void {
    if (!this.subscriptions.size) return
    const userIds = [...new Set([...this.subscriptions].map((s) => s.viewer.userId))]
    const wave = new Wave(event, this.isUserTopic, userIds)
    for (const subscription of [...this.subscriptions]) subscription.push(wave)
  }
}

/**
 * A conversation's topic in this process. Message events leave in pts order with no hole: pts are
 * contiguous per conversation and every change publishes one event, so a missing pts is one that
 * is late (another instance published it) or lost (a crash between commit and publish). The feed
 * holds later events for GAP_WAIT_MS, then reads the missing changes from the database.
 */
class ConversationFeed extends Fanout {
  /** The pts up to which every change has been emitted (or came before this feed started). */
  head = 0
  private early: RealtimeEvent[] | null = []
  private readonly held = new Map<number, MessageChange>()
  private timer: NodeJS.Timeout | null = null
  private filling = false

  constructor(
    hub: Hub,
    readonly conversationId: number,
  ) {
    super(hub, conversationTopic(conversationId), false)
  }

  override start(): this {
    this.ready = (async () => {
      await this.hub.realtime.listen(this.topic, this.listener)
      // Read after the bus confirmed the topic: every change past this pts is delivered to the listener.
      this.head = await this.hub.lastPts.load(this.conversationId)
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

  /** Reads the changes still missing up to the newest held one, then emits everything up to it in order. */
  private async fill(): Promise<void> {
    this.timer = null
    this.filling = true
    try {
      const until = Math.max(...this.held.keys())
      const found = await findChangeKeys(this.hub.app.db, this.conversationId, this.head, until)
      for (const change of found) {
        if (change.pts > this.head && !this.held.has(change.pts)) {
          this.held.set(change.pts, { type: 'message', kind: kindOf(change), conversationId: this.conversationId, seq: change.seq, pts: change.pts })
        }
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
      this.hub.log('could not fill a gap in a live stream; retrying', error)
    } finally {
      this.filling = false
      if (this.subscriptions.size) this.advance()
    }
  }
}

/** Per process (per bus): the topics with local subscribers, and the open subscriptions. */
class Hub {
  private readonly conversations = new Map<number, ConversationFeed>()
  private readonly users = new Map<number, Fanout>()
  readonly open = new Set<Subscription>()
  /** Feed starts in one tick share one statement (an inbox attaches to all its conversations at once). */
  readonly lastPts: DataLoader<number, number>

  constructor(
    readonly app: App,
    readonly log: (message: string, error?: unknown) => void = (message, error) => console.error(`[parley] ${message}`, error ?? ''),
  ) {
    this.lastPts = new DataLoader<number, number>(
      async (ids) => {
        const found = await findLastPts(app.db, ids)
        return ids.map((id) => found.get(id) ?? 0)
      },
      { cache: false },
    )
  }

  get realtime(): Realtime {
    return this.app.realtime
  }

  /** Joins the conversation's feed; resolves with the pts after which the feed delivers every change. */
  async joinConversation(subscription: Subscription, conversationId: number): Promise<number> {
    const feed = await this.enter(this.conversations, conversationId, subscription, () => new ConversationFeed(this, conversationId))
    return feed.head
  }

  leaveConversation(subscription: Subscription, conversationId: number): void {
    this.leave(this.conversations, conversationId, subscription)
  }

  async joinUser(subscription: Subscription): Promise<void> {
    const userId = subscription.viewer.userId
    await this.enter(this.users, userId, subscription, () => new Fanout(this, userTopic(userId), true))
  }

  /** Adds the subscription to the topic's fanout (started on first use); leaves again if listening fails. */
  private async enter<F extends Fanout>(map: Map<number, F>, key: number, subscription: Subscription, create: () => F): Promise<F> {
    let fanout = map.get(key)
    if (!fanout) map.set(key, (fanout = create().start()))
    fanout.subscriptions.add(subscription)
    try {
      await fanout.ready
    } catch (error) {
      this.leave(map, key, subscription)
      throw error
    }
    return fanout
  }

  leaveUser(subscription: Subscription): void {
    this.leave(this.users, subscription.viewer.userId, subscription)
  }

  private leave(map: Map<number, Fanout>, key: number, subscription: Subscription): void {
    const fanout = map.get(key)
    if (!fanout?.subscriptions.delete(subscription) || fanout.subscriptions.size) return
    fanout.stop()
    map.delete(key)
  }

  /** Subscriptions that finished opening (listening, resume position taken), and the topics listened to. */
  stats(userId?: number) {
    const live = [...this.open].filter((s) => s.opened && (userId === undefined || s.viewer.userId === userId))
    return { subscriptions: live.length, conversationTopics: this.conversations.size, userTopics: this.users.size }
  }

  /** Ends every local subscription (their streams complete; clients resume with sincePts). */
  close(): void {
    for (const subscription of [...this.open]) subscription.close()
  }
}

const hubs = new WeakMap<Realtime, Hub>()

function hubOf(app: App): Hub {
  let hub = hubs.get(app.realtime)
  if (!hub) {
    const created = new Hub(app)
    hubs.set(app.realtime, created)
    app.realtime.onClose(() => created.close())
    hub = created
  }
  return hub
}

/** This process's live subscriptions (all, or one user's), and how many topics they listen to. */
export const deliveryStats = (app: App, userId?: number) => hubOf(app).stats(userId)

/** Ends every live subscription of this process (shutdown): streams complete, and clients resume. */
export const endSubscriptions = (app: App) => hubs.get(app.realtime)?.close()

type Scope = { conversationId: number } | 'inbox'

/**
 * One GraphQL subscription: a bounded queue of waves fed by the topics it joined, and the pts it
 * has delivered per conversation (events at or below it are skipped: the replay or an earlier
 * event already carried them).
 */
class Subscription {
  readonly queue: BoundedQueue<Wave>
  readonly delivered = new Map<number, number>()
  private readonly joined = new Set<number>()
  opened = false
  private closed = false

  constructor(
    private readonly hub: Hub,
    readonly viewer: Viewer,
    private readonly scope: Scope,
  ) {
    this.queue = new BoundedQueue(hub.realtime.subscriberBuffer, () => this.leaveAll())
    hub.open.add(this)
  }

  push(wave: Wave): void {
    this.queue.push(wave)
  }

  /** Listens to the viewer's topic (a closed subscription joins nothing: it could never leave again). */
  async listenUser(): Promise<void> {
    if (!this.closed) await this.hub.joinUser(this)
  }

  /** Joins a conversation's feed; resolves with the feed's position (see Hub.joinConversation). */
  async join(conversationId: number): Promise<number> {
    if (this.closed) return 0
    // Recorded before the join resolves, so a close meanwhile leaves this feed too.
    this.joined.add(conversationId)
    const head = await this.hub.joinConversation(this, conversationId)
    if (!this.delivered.has(conversationId)) this.delivered.set(conversationId, head)
    return head
  }

  leave(conversationId: number): void {
    this.joined.delete(conversationId)
    this.delivered.delete(conversationId)
    this.hub.leaveConversation(this, conversationId)
  }

  private leaveAll(): void {
    for (const id of [...this.joined]) this.leave(id)
    this.hub.leaveUser(this)
  }

  close(): void {
    if (this.closed) return
    this.closed = true
    this.queue.close()
    this.leaveAll()
    this.hub.open.delete(this)
  }

  private get db(): Db {
    return this.hub.app.db
  }

  loaders(wave?: Wave): Loaders {
    const loaders = createLoaders(this.db, this.viewer)
    return wave ? { ...loaders, users: wave.sharedUsers(this.db) } : loaders
  }

  /** Replays the changes in (sincePts, untilPts] from the database, ascending by pts, a page at a time. */
  async *replay(conversationId: number, access: ConversationAccess, sincePts: number, untilPts: number): AsyncGenerator<DeliveryBatch> {
    const read = (after: number): Promise<MessageRecord[]> => {
      const page = listChanges(this.db, this.viewer, conversationId, { sincePts: after, untilPts, limit: REPLAY_PAGE })
      page.catch(() => {}) // awaited below, unless the subscriber leaves first
      return page
    }
    // The next page is read while this one is delivered, so the stream never waits on the database.
    let next: Promise<MessageRecord[]> | null = read(sincePts)
    while (next) {
      const page: MessageRecord[] = await next
      next = page.length === REPLAY_PAGE ? read(page.at(-1)!.pts) : null
      if (!page.length) break
      const loaders = this.loaders()
      loaders.conversations.prime(conversationId, access)
      for (const message of page) loaders.messages.prime(message, message)
      yield {
        payloads: page.map((message) => ({ typename: 'MessageEvent', kind: kindOf({ status: message.status, edited: message.editedAt !== null }), pts: message.pts, message })),
        loaders,
      }
    }
    this.delivered.set(conversationId, Math.max(this.delivered.get(conversationId) ?? 0, untilPts, sincePts))
  }

  /** Live events until the queue ends: overflow ends the stream with RESYNC_REQUIRED, close just ends it. */
  async *live(): AsyncGenerator<Delivery> {
    for (;;) {
      const next = await this.queue.take()
      if ('end' in next) {
        if (next.end === 'overflow') yield this.fail(new DomainError('RESYNC_REQUIRED', 'this subscription fell too far behind; subscribe again with sincePts'))
        return
      }
      const wave = next.value
      const delivery = wave.fromUserTopic ? await this.fromUserTopic(wave) : await this.fromConversation(wave)
      if (!delivery) continue
      yield delivery
      if (delivery.payload.typename === 'Error') return
    }
  }

  fail(error: Error): Delivery {
    return { payload: { typename: 'Error', error }, loaders: this.loaders() }
  }

  /** The viewer is no longer a member: a conversation stream ends with NOT_FOUND, the inbox just stops listening there. */
  private lostAccess(conversationId: number): Delivery | null {
    if (this.scope === 'inbox') {
      this.leave(conversationId)
      return null
    }
    return this.fail(notFound('Conversation'))
  }

  private async fromConversation(wave: Wave): Promise<Delivery | null> {
    const event = wave.event as ConversationBound
    const self = this.viewer.userId
    const conversationId = event.conversationId
    const delivered = this.delivered.get(conversationId)
    if (delivered === undefined) return null
    if (event.type === 'message' && event.pts <= delivered) return null
    // The reader's own read events come through the reader's topic (also when receipts are hidden).
    if (event.type === 'read' && (event.userId === self || !event.receiptsVisible)) return null
    if (event.type === 'typing' && event.userId === self) return null

    const reads = await wave.load(this.db)
    const entry = reads.members.get(self)
    if (!entry) return this.lostAccess(conversationId)
    const loaders = this.loaders(wave)
    switch (event.type) {
      case 'message': {
        this.delivered.set(conversationId, event.pts)
        if (!entry.sees || !reads.message || !reads.conversation) return null
        loaders.conversations.prime(conversationId, { conversation: reads.conversation, member: entry.member })
        loaders.messages.prime(reads.message, reads.message)
        return { payload: { typename: 'MessageEvent', kind: event.kind, pts: event.pts, message: reads.message }, loaders }
      }
      case 'read':
        return { payload: { typename: 'ReadEvent', conversationId, userId: event.userId, lastReadSeq: event.lastReadSeq }, loaders }
      case 'typing':
        return { payload: { typename: 'TypingEvent', conversationId, userId: event.userId, expiresAt: new Date(event.expiresAt) }, loaders }
    }
  }

  private async fromUserTopic(wave: Wave): Promise<Delivery | null> {
    const event = wave.event
    const scoped = this.scope === 'inbox' ? null : this.scope.conversationId
    const loaders = this.loaders(wave)
    switch (event.type) {
      case 'read':
        if (scoped !== null && event.conversationId !== scoped) return null
        return { payload: { typename: 'ReadEvent', conversationId: event.conversationId, userId: event.userId, lastReadSeq: event.lastReadSeq }, loaders }
      case 'removed':
        if (scoped !== null) return event.conversationId === scoped ? this.lostAccess(scoped) : null
        this.leave(event.conversationId)
        return null
      case 'joined': {
        if (scoped !== null) return null
        // Listen first: the conversation as resolved below is at least as new as the first live event.
        await this.join(event.conversationId)
        const access = await loaders.conversations.load(event.conversationId)
        if (!access?.member) return this.lostAccess(event.conversationId)
        return { payload: { typename: 'ConversationJoinedEvent', conversation: access }, loaders }
      }
      case 'reminderDue': {
        if (scoped !== null) return null
        const message = await loaders.messages.load(event)
        return message ? { payload: { typename: 'ReminderDueEvent', message, remindAt: new Date(event.remindAt) }, loaders } : null
      }
      case 'messageAction': {
        if (scoped !== null) return null
        const key = { conversationId: event.conversationId, seq: event.seq }
        // A message deleted for the viewer is invisible to them, but its state still goes to their devices.
        const [message, stored] = await Promise.all([loaders.messages.load(key), loaders.viewerStates.load(key)])
        return { payload: { typename: 'MessageActionEvent', key, state: message ? viewerStateOf(message, stored) : stored }, loaders }
      }
      case 'message':
      case 'typing':
        return null
    }
  }
}

/**
 * Runs `events` as the subscription's stream. A failure while streaming (the database away) ends it
 * with that error as the last payload, so it is masked like any resolver error and the client
 * resumes; the subscription is closed however the stream ends. return() closes the subscription
 * first, so it does not wait for a next event.
 */
function stream<T>(subscription: Subscription, events: () => AsyncGenerator<T>, failure: (delivery: Delivery) => T): AsyncIterableIterator<T> {
  async function* guarded(): AsyncGenerator<T> {
    try {
      yield* events()
    } catch (error) {
      yield failure(subscription.fail(error instanceof Error ? error : new Error(String(error))))
    } finally {
      subscription.close()
    }
  }
  const body = guarded()
  return {
    next: () => body.next(),
    async return() {
      subscription.close()
      return body.return(undefined)
    },
    async throw(error: unknown) {
      subscription.close()
      return body.throw(error)
    },
    [Symbol.asyncIterator]() {
      return this
    },
  }
}

/** Opens a subscription, or closes it again if opening fails. */
async function opening<T>(subscription: Subscription, work: () => Promise<T>): Promise<T> {
  try {
    const result = await work()
    subscription.opened = true
    return result
  } catch (error) {
    subscription.close()
    throw error
  }
}

type ConversationStreamInput = { conversationId: string; sincePts?: number | null }

/**
 * Opens a conversation stream: checks access, listens (user topic, then the conversation's feed),
 * and returns the replay of the changes from sincePts up to the feed's position (empty without
 * sincePts). Live events at or below what was replayed are skipped. Errors here are the
 * subscription's errors; later ones end the stream.
 */
async function openConversation(app: App, viewer: Viewer, input: ConversationStreamInput) {
  const conversationId = parseId(input.conversationId, 'Conversation')
  const sincePts = input.sincePts ?? null
  if (sincePts !== null && (!Number.isSafeInteger(sincePts) || sincePts < 0)) throw badInput('sincePts must be a non-negative integer', 'sincePts')
  const access = await accessConversation(app.db, viewer, conversationId, { lock: false })
  if (sincePts !== null && sincePts > access.conversation.lastPts) throw badInput('sincePts is ahead of the conversation', 'sincePts')

  const subscription = new Subscription(hubOf(app), viewer, { conversationId })
  const head = await opening(subscription, async () => {
    await subscription.listenUser()
    const head = await subscription.join(conversationId)
    if (sincePts !== null && head - sincePts > app.settings.resyncLimit) {
      throw new DomainError('RESYNC_REQUIRED', `more than ${app.settings.resyncLimit} changes since sincePts; refetch the history, then subscribe with its lastPts`)
    }
    return head
  })
  async function* replay(): AsyncGenerator<DeliveryBatch> {
    if (sincePts !== null) yield* subscription.replay(conversationId, access, sincePts, head)
  }
  return { subscription, replay }
}

/** Subscription.conversationEvents: the replay, then live events, one event per payload. */
export async function openConversationEvents(app: App, viewer: Viewer, input: ConversationStreamInput): Promise<AsyncIterableIterator<Delivery>> {
  const { subscription, replay } = await openConversation(app, viewer, input)
  return stream(
    subscription,
    async function* () {
      for await (const page of replay()) for (const payload of page.payloads) yield { payload, loaders: page.loaders }
      yield* subscription.live()
    },
    (delivery) => delivery,
  )
}

/**
 * Subscription.conversationEventBatches: the same stream, but a replay comes a page per payload, so
 * a client catching up on thousands of changes gets one execution and one frame per page instead of
 * per change. Live events come one per payload.
 */
export async function openConversationEventBatches(app: App, viewer: Viewer, input: ConversationStreamInput): Promise<AsyncIterableIterator<DeliveryBatch>> {
  const { subscription, replay } = await openConversation(app, viewer, input)
  return stream(
    subscription,
    async function* () {
      yield* replay()
      for await (const delivery of subscription.live()) yield batchOf(delivery)
    },
    batchOf,
  )
}

/**
 * Subscription.inboxEvents: the viewer's topic plus the feeds of every conversation the viewer is
 * in (joining new ones on `joined`, leaving on `removed`), so one message costs one publish
 * whatever the size of the conversation.
 */
export async function openInboxEvents(app: App, viewer: Viewer): Promise<AsyncIterableIterator<Delivery>> {
  const subscription = new Subscription(hubOf(app), viewer, 'inbox')
  await opening(subscription, async () => {
    // The viewer's topic first, so a conversation joined while this runs arrives as an event.
    await subscription.listenUser()
    const ids = await listMemberConversationIds(app.db, viewer.userId)
    await Promise.all(ids.map((id) => subscription.join(id)))
  })
  return stream(subscription, () => subscription.live(), (delivery) => delivery)
}
