import type DataLoader from 'dataloader'
import type { Db } from '../../db/client.ts'
import type { RealtimeEvent } from '../../realtime/events.ts'
import { findConversationsForUser } from '../../store/conversations.ts'
import { findDeliveryMembers, findMessage, type DeliveryMember } from '../../store/delivery.ts'
import type { ConversationRecord, MessageRecord, UserRecord } from '../../store/records.ts'
import { createLoaders } from '../history/loaders.ts'

export type ConversationBound = Extract<RealtimeEvent, { type: 'message' | 'read' | 'typing' }>

export type WaveReads = {
  members: Map<number, DeliveryMember>
  message: MessageRecord | null
  conversation: ConversationRecord | null
}

/**
 * One bus event on its way to every local subscriber of its topic. The reads it needs (the message
 * row, the conversation row, the subscribers' membership and visibility, the users it names) run
 * once for all of them, the first time any subscriber asks.
 */
export class Wave {
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
    seq === null
      ? null
      : findConversationsForUser(db, [conversationId], 0).then((found) => found[0]?.conversation ?? null),
  ])
  return { members: new Map(members.map((m) => [m.member.userId, m])), message, conversation }
}
