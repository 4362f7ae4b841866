import type { RealtimeEvent } from '../../realtime/events.ts'
import type { MemberRecord, MessageRecord } from '../../store/records.ts'
import type { DeliveryMember } from '../../store/delivery.ts'
import type { ConversationBound, WaveReads } from './wave.ts'

/**
 * What one viewer receives from one event: pure functions of the event, the subscription's position
 * and the reads the event's wave shares, so they are tested without a database.
 */

/**
 * A conversation stream, the inbox (every conversation of the viewer), or the account stream
 * (viewerUpdates: the inbox, but the viewer's own changes are read from the sync difference).
 */
export type Scope = { conversationId: number } | 'inbox' | 'account'

/** Whether the scope follows every conversation of the viewer. */
export const followsAll = (scope: Scope): scope is 'inbox' | 'account' => scope === 'inbox' || scope === 'account'

/**
 * Before any read: whether a conversation event can concern this viewer. `delivered` is the pts the
 * subscription has delivered in that conversation (undefined: it does not follow it).
 */
export function mayConcern(event: ConversationBound, viewerId: number, delivered: number | undefined): boolean {
  if (delivered === undefined) return false
  switch (event.type) {
    // At or below `delivered`: a replay or an earlier event already carried it.
    case 'message':
      return event.pts > delivered
    // Others' read positions only where receipts are on; the reader's own come through the reader's topic.
    case 'read':
      return event.userId !== viewerId && event.receiptsVisible
    case 'typing':
      return event.userId !== viewerId
    // Signals to some members reach only them; a stream's deltas reach every member, the sender's other devices too.
    case 'signal':
      return event.toUserIds === null || event.toUserIds.includes(viewerId)
    case 'stream':
      return true
  }
}

/**
 * With the wave's reads (`member`: the viewer's entry in them): the viewer lost access (no longer a
 * member), may not see this message (membership window, directed, deleted for them), or gets it.
 */
export function conversationVerdict(
  event: ConversationBound,
  member: DeliveryMember | undefined,
  reads: WaveReads,
): 'lostAccess' | 'hidden' | 'deliver' {
  if (!member) return 'lostAccess'
  if (event.type === 'message' && (!member.sees || !reads.message || !reads.conversation)) return 'hidden'
  // A streamed message before the member's window (JOINED history) stays hidden, its deltas too.
  if (event.type === 'stream' && event.seq < member.member.visibleFromSeq) return 'hidden'
  return 'deliver'
}

/**
 * Whether a member may see a message: store/fragments.ts#visibleToUser decided in memory from rows
 * an event's wave read once for every subscriber (the membership window, the directed audience,
 * the member's own delete-for-me), so it costs no read per subscriber. The two must say the same.
 */
export function seesMessage(
  member: Pick<MemberRecord, 'userId' | 'visibleFromSeq'>,
  message: Pick<MessageRecord, 'seq' | 'senderId' | 'visibleTo'>,
  deletedForMe: boolean,
): boolean {
  const directed =
    message.visibleTo.length === 0 || message.senderId === member.userId || message.visibleTo.includes(member.userId)
  return message.seq >= member.visibleFromSeq && directed && !deletedForMe
}

/**
 * What an event on the viewer's own topic means for a subscription of `scope`: deliver it, skip it,
 * follow a conversation the viewer joined (inbox, account), stop following one the viewer left
 * (inbox, account), end the stream because the viewer left its conversation, or (account) read the
 * sync difference, which carries this change with everything else of the viewer's own.
 */
export function userTopicVerdict(
  event: RealtimeEvent,
  scope: Scope,
): 'deliver' | 'skip' | 'join' | 'leave' | 'lostAccess' | 'sync' {
  const scoped = followsAll(scope) ? null : scope.conversationId
  switch (event.type) {
    case 'read':
      if (scope === 'account') return 'sync'
      return scoped === null || event.conversationId === scoped ? 'deliver' : 'skip'
    case 'removed':
      return scoped === null ? 'leave' : event.conversationId === scoped ? 'lostAccess' : 'skip'
    case 'joined':
      return scoped === null ? 'join' : 'skip'
    case 'reminderDue':
      return scoped === null ? 'deliver' : 'skip'
    // Others' presence is no change of the viewer's account: the inbox only.
    case 'presence':
      return scope === 'inbox' ? 'deliver' : 'skip'
    case 'messageAction':
    case 'conversationUpdated':
    case 'friendship':
      return scope === 'account' ? 'sync' : scoped === null ? 'deliver' : 'skip'
    case 'message':
    case 'typing':
    case 'account':
    case 'signal':
    case 'stream':
      return 'skip'
  }
}
