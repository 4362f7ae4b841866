import { shownViewerState } from '../policy/policy.ts'
import { presencePayload, type Delivery } from './payloads.ts'
import type { Loaders } from '../history/loaders.ts'
import { userTopicVerdict, type Scope } from './rules.ts'
import type { Wave } from './wave.ts'

/** Reminder firings a subscription remembers to drop a repeat (one comes a lease, 30 s, after the first). */
const REMINDERS_REMEMBERED = 1000

/** Reminder firings delivered ("<conversation>:<seq>:<remindAt>"): a reminder fired again after a lost lease shows once. */
export class RemindersDelivered {
  private readonly firings = new Set<string>()

  has(firing: string): boolean {
    return this.firings.has(firing)
  }

  add(firing: string): void {
    this.firings.add(firing)
    if (this.firings.size > REMINDERS_REMEMBERED) this.firings.delete(this.firings.values().next().value!)
  }
}

/** What delivering a user topic's event asks of its subscription (subscription.ts). */
interface UserTopicSubscriber {
  readonly scope: Scope
  readonly reminders: RemindersDelivered
  loaders(wave?: Wave): Loaders
  lostAccess(conversationId: number): Delivery | null
  leave(conversationId: number): void
  join(conversationId: number): Promise<number>
}

/**
 * An event of the viewer's own topic as `subscription` delivers it: membership changes (joined,
 * removed) move its feeds, the rest is the viewer's alone (read positions elsewhere, actions on
 * messages, reminders, friendships, presence) or tells the account stream to sync.
 */
export async function fromUserTopic(subscription: UserTopicSubscriber, wave: Wave): Promise<Delivery | null> {
  const event = wave.event
  const verdict = userTopicVerdict(event, subscription.scope)
  if (verdict === 'skip') return null
  const loaders = subscription.loaders(wave)
  const accountChanged: Delivery = { payload: { typename: 'AccountChanged' }, loaders }
  switch (event.type) {
    case 'removed':
      if (verdict === 'lostAccess') return subscription.lostAccess(event.conversationId)
      subscription.leave(event.conversationId)
      return subscription.scope === 'account' ? accountChanged : null
    case 'read':
      if (verdict === 'sync') return accountChanged
      return {
        payload: {
          typename: 'ReadEvent',
          conversationId: event.conversationId,
          userId: event.userId,
          lastReadSeq: event.lastReadSeq,
        },
        loaders,
      }
    case 'joined': {
      // Listen first: the conversation as resolved below is at least as new as the first live event.
      await subscription.join(event.conversationId)
      if (subscription.scope === 'account') return accountChanged
      const access = await loaders.conversations.load(event.conversationId)
      if (!access?.member) return subscription.lostAccess(event.conversationId)
      return { payload: { typename: 'ConversationJoinedEvent', conversation: access }, loaders }
    }
    case 'reminderDue': {
      const firing = `${event.conversationId}:${event.seq}:${event.remindAt}`
      if (subscription.reminders.has(firing)) return null
      const message = await loaders.messages.load(event)
      if (!message) return null
      subscription.reminders.add(firing)
      return { payload: { typename: 'ReminderDueEvent', message, remindAt: new Date(event.remindAt) }, loaders }
    }
    case 'messageAction': {
      if (verdict === 'sync') return accountChanged
      const key = { conversationId: event.conversationId, seq: event.seq }
      // A message deleted for the viewer is invisible to them, but its state still goes to their devices.
      const [message, stored] = await Promise.all([loaders.messages.load(key), loaders.viewerStates.load(key)])
      return {
        payload: { typename: 'MessageActionEvent', key, state: message ? shownViewerState(message, stored) : stored },
        loaders,
      }
    }
    case 'conversationUpdated': {
      if (verdict === 'sync') return accountChanged
      const access = await loaders.conversations.load(event.conversationId)
      return access?.member
        ? { payload: { typename: 'ConversationUpdatedEvent', conversation: access }, loaders }
        : null
    }
    case 'friendship': {
      if (verdict === 'sync') return accountChanged
      // The state as it is now: events carry keys only, and a later change sends its own event.
      const state = await loaders.friendships.load(event.peerId)
      return { payload: { typename: 'FriendshipEvent', userId: event.peerId, state }, loaders }
    }
    case 'presence':
      return { payload: presencePayload(event), loaders }
    case 'message':
    case 'typing':
    case 'account':
    case 'signal':
    case 'stream':
      return null
  }
}
