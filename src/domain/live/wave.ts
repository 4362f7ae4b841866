import DataLoader from 'dataloader'
import type { Db } from '../../db/client.ts'
import type { RealtimeEvent } from '../../realtime/events.ts'
import {
  findAudienceReactions,
  findAudienceStates,
  findDeliveryMembers,
  type AudienceReactionGroup,
  type AudienceState,
  type DeliveryMember,
} from '../../store/delivery.ts'
import { findVisibleMessages } from '../../store/messages.ts'
import type { ConversationRecord, MessageRecord } from '../../store/records.ts'
import { NO_ACTIONS, type ViewerState } from '../../store/userActions.ts'
import type { Viewer } from '../core/app.ts'
import { messageKeyText, type MessageKey } from '../core/ids.ts'
import { createLoaders, type LoaderOverrides, type Loaders } from '../history/loaders.ts'
import { seesMessage } from './rules.ts'

export type ConversationBound = Extract<RealtimeEvent, { type: 'message' | 'read' | 'typing' | 'signal' | 'stream' }>

export type WaveReads = {
  members: Map<number, DeliveryMember>
  message: MessageRecord | null
  conversation: ConversationRecord | null
}

const byKey = <V extends MessageKey>(rows: V[]) => new Map(rows.map((r) => [messageKeyText(r), r]))

/**
 * One bus event on its way to every local subscriber of its topic. Everything it needs from the
 * database is read once for all of them, the first time any subscriber asks: the message and
 * conversation rows, the subscribers' memberships (their only rows of their own), their actions on
 * the message (delete-for-me decides visibility), and whatever the payloads select — users, edits,
 * a quoted message, reaction groups with which subscribers reacted. Each subscriber's view is then
 * decided in memory (rules.ts), through loaders that answer from those shared reads (loadersFor).
 */
export class Wave {
  private reads: Promise<WaveReads> | null = null
  private shared: Shared | null = null
  private members: Map<number, DeliveryMember> | null = null
  /** The results subscribers with the same view share (payloads.ts#SharedView), kept as long as the wave. */
  readonly views = new Map<unknown, unknown>()

  constructor(
    readonly event: RealtimeEvent,
    readonly fromUserTopic: boolean,
    private readonly userIds: readonly number[],
  ) {}

  /** Membership (and for a message, visibility) of the subscribers, with the rows they share. */
  load(db: Db): Promise<WaveReads> {
    return (this.reads ??= this.loadReads(db, this.event as ConversationBound))
  }

  /**
   * The loaders `viewer` resolves this event's payload through: viewer-independent rows from one
   * set for the wave, the viewer's own view (visibility, marks, reactions) decided in memory from
   * rows read for every subscriber at once. Events on a user topic have one viewer: they share users only.
   */
  loadersFor(db: Db, viewer: Viewer): Loaders {
    const shared = this.sharedReads(db)
    if (this.fromUserTopic) return createLoaders(db, viewer, { users: () => shared.common.users })
    return createLoaders(db, viewer, shared.overrides)
  }

  private sharedReads(db: Db): Shared {
    return (this.shared ??= new Shared(db, this.userIds, this))
  }

  /** The viewer's membership of the event's conversation, once the wave's reads are in (undefined: not a member). */
  memberOf(userId: number): DeliveryMember | undefined {
    return this.members?.get(userId)
  }

  private async loadReads(db: Db, event: ConversationBound): Promise<WaveReads> {
    const { conversationId } = event
    const key = event.type === 'message' ? { conversationId, seq: event.seq } : null
    const shared = this.sharedReads(db)
    // Two statements: the members (each row with the conversation's), the message with the members' actions on it.
    const [rows, [message, states]] = await Promise.all([
      findDeliveryMembers(db, conversationId, this.userIds),
      key ? shared.messageWithStates(key) : ([null, null] as const),
    ])
    const members = new Map(
      rows.map(({ conversation: _, ...row }) => {
        const deleted = states?.get(row.member.userId)?.deletedForMe ?? false
        const sees = key === null || (message !== null && seesMessage(row.member, message, deleted))
        return [row.member.userId, { ...row, sees }]
      }),
    )
    this.members = members
    return { members, message, conversation: key && (rows[0]?.conversation ?? null) }
  }
}

/**
 * A wave's shared loaders: messages as stored, the subscribers' own actions and reactions per
 * message (one statement each for all of them), and a viewer-independent set (users, edits).
 */
class Shared {
  readonly common: Loaders
  readonly messages: DataLoader<MessageKey, MessageRecord | null, string>
  readonly states: DataLoader<MessageKey, Map<number, ViewerState>, string>
  readonly reactions: DataLoader<MessageKey, AudienceReactionGroup[], string>
  readonly overrides: LoaderOverrides

  constructor(db: Db, userIds: readonly number[], wave: Wave) {
    this.common = createLoaders(db, null)
    const statesOf = (keys: readonly MessageKey[], states: AudienceState[]) => {
      const found = new Map(keys.map((k) => [messageKeyText(k), new Map<number, ViewerState>()]))
      for (const { userId, ...state } of states) found.get(messageKeyText(state))!.set(userId, state)
      return keys.map((k) => found.get(messageKeyText(k))!)
    }
    // A message's read brings the subscribers' actions on it (primed), so visibility needs no second statement.
    this.messages = new DataLoader(
      async (keys) => {
        const { messages, states, senders } = await findAudienceStates(db, keys, userIds, true)
        statesOf(keys, states).forEach((byUser, i) => this.states.prime(keys[i]!, byUser))
        for (const sender of senders) this.common.users.prime(sender.id, sender)
        const found = byKey(messages)
        return keys.map((k) => found.get(messageKeyText(k)) ?? null)
      },
      { cacheKeyFn: messageKeyText },
    )
    this.states = new DataLoader(async (keys) => statesOf(keys, (await findAudienceStates(db, keys, userIds)).states), {
      cacheKeyFn: messageKeyText,
    })
    this.reactions = new DataLoader(
      async (keys) => {
        const found = new Map(keys.map((k) => [messageKeyText(k), [] as AudienceReactionGroup[]]))
        // A message nobody ever reacted to (no reaction change took a pts) has no groups: a fresh one costs no read.
        const stored = await Promise.all(keys.map((k) => this.messages.load(k)))
        const reacted = keys.filter((_, i) => stored[i]?.reactionsPts != null)
        if (reacted.length)
          for (const group of await findAudienceReactions(db, reacted, userIds))
            found.get(messageKeyText(group))!.push(group)
        return keys.map((k) => found.get(messageKeyText(k))!)
      },
      { cacheKeyFn: messageKeyText },
    )
    this.overrides = {
      users: () => this.common.users,
      edits: () => this.common.edits,
      messages: ({ viewerId }) =>
        new DataLoader((keys) => this.visibleMessages(db, wave.memberOf(viewerId), viewerId, keys), {
          cacheKeyFn: messageKeyText,
        }),
      viewerStates: ({ viewerId }) =>
        new DataLoader(
          async (keys) =>
            (await Promise.all(keys.map((k) => this.states.load(k)))).map(
              (byUser) => byUser.get(viewerId) ?? NO_ACTIONS,
            ),
          { cacheKeyFn: messageKeyText },
        ),
      reactions: ({ viewerId }) =>
        new DataLoader(
          async (keys) =>
            (await Promise.all(keys.map((k) => this.reactions.load(k)))).map((groups) =>
              groups.map(({ reactors, ...group }) => ({
                ...group,
                viewerReacted: reactors.includes(viewerId),
              })),
            ),
          { cacheKeyFn: messageKeyText },
        ),
    }
  }

  /** A message as stored and the subscribers' actions on it, from one statement (the states come primed). */
  async messageWithStates(key: MessageKey): Promise<[MessageRecord | null, Map<number, ViewerState>]> {
    const message = await this.messages.load(key)
    return [message, await this.states.load(key)]
  }

  /**
   * Messages as `viewerId` may see them: those of the event's conversation from the shared rows,
   * decided with the viewer's membership (rules.ts#seesMessage); any other (none a payload selects
   * today) read as the viewer's own.
   */
  private async visibleMessages(
    db: Db,
    member: DeliveryMember | undefined,
    viewerId: number,
    keys: readonly MessageKey[],
  ): Promise<(MessageRecord | null)[]> {
    const elsewhere = keys.filter((k) => member?.member.conversationId !== k.conversationId)
    const own = elsewhere.length ? byKey(await findVisibleMessages(db, { userId: viewerId }, elsewhere)) : null
    return Promise.all(
      keys.map(async (k) => {
        if (!member || member.member.conversationId !== k.conversationId) return own?.get(messageKeyText(k)) ?? null
        const [message, states] = await this.messageWithStates(k)
        const deleted = states.get(viewerId)?.deletedForMe ?? false
        return message && seesMessage(member.member, message, deleted) ? message : null
      }),
    )
  }
}
