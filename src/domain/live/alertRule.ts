import type { MessageEventKind } from '../../realtime/events.ts'
import type { MessageRecord } from '../../store/records.ts'
import { seesMessage } from './rules.ts'

/**
 * What the alert rule needs of a member: who, the JOINED window's start, their do-not-disturb, and
 * whether they follow the thread of the message (a reply's root; absent: no).
 */
export type AlertMember = {
  userId: number
  visibleFromSeq: number
  doNotDisturbUntil: Date | null
  followsThread?: boolean
}
export type AlertMessage = Pick<
  MessageRecord,
  'seq' | 'senderId' | 'kind' | 'mentionUserIds' | 'mentionAll' | 'visibleTo' | 'inConversation'
>

/** Do-not-disturb is on while now < doNotDisturbUntil (a past time is off). */
export const inDoNotDisturb = (until: Date | null, now: Date): boolean => until !== null && until > now

/**
 * Who a message alerts: the one rule behind MessageEvent.alert (live and replayed), an archived
 * conversation coming back (domain/members/conversationSettings.ts) and push notifications
 * (domain/push). An ADDED message by someone else, that the member may see (inside their JOINED
 * window, not directed at others), outside do-not-disturb, or mentioning the member or @all, which
 * breaks through it. Never for own messages, SYSTEM events (a host's text or card posted as SYSTEM
 * alerts like anyone's message, decision 0279), edits or recalls. A thread reply not sent
 * alsoInConversation alerts only the thread's followers and whoever it mentions (docs/threads.md). A muted or blocked
 * sender's message is refused before it exists (domain/policy/policy.ts#checkSender), so it alerts nobody.
 */
export const alertRule = {
  alerts(kind: MessageEventKind, message: AlertMessage, member: AlertMember, now: Date): boolean {
    if (kind !== 'ADDED' || message.kind === 'SYSTEM' || message.senderId === member.userId) return false
    if (!seesMessage(member, message, false)) return false
    const mentioned = message.mentionAll || message.mentionUserIds.includes(member.userId)
    if (!message.inConversation && !member.followsThread && !mentioned) return false
    return !inDoNotDisturb(member.doNotDisturbUntil, now) || mentioned
  },
}
