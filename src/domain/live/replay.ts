import type { LiveApp } from './hub.ts'
import { listChanges } from '../../store/changes.ts'
import type { ConversationAccess } from '../../store/conversations.ts'
import { findSettings } from '../../store/conversationSettings.ts'
import { findFollowedRoots } from '../../store/threads.ts'
import type { MessageRecord, UserRecord } from '../../store/records.ts'
import type { Loaders } from '../history/loaders.ts'
import { kindOf, type DeliveryBatch } from './payloads.ts'
import { alertRule } from './alertRule.ts'
import type { Subscription } from './subscription.ts'

/** Replay reads the missed changes this many at a time (a resume within the default RESYNC_LIMIT is one statement)... */
const REPLAY_READ = 1000
/** ...and delivers them this many at a time (a conversationEventBatches payload). */
const REPLAY_PAGE = 100

/**
 * Replays the changes in (sincePts, untilPts] of a conversation to `subscription` from the database,
 * ascending by pts: read REPLAY_READ at a time, delivered REPLAY_PAGE at a time (one set of loaders,
 * primed with the page's messages).
 */
export async function* replayMissed(
  app: LiveApp,
  subscription: Subscription,
  conversationId: number,
  access: ConversationAccess,
  sincePts: number,
  untilPts: number,
): AsyncGenerator<DeliveryBatch> {
  const viewer = subscription.viewer
  const read = (after: number): Promise<MessageRecord[]> => {
    const rows = listChanges(app.db, viewer, conversationId, { sincePts: after, untilPts, limit: REPLAY_READ })
    rows.catch(() => {}) // awaited below, unless the subscriber leaves first
    return rows
  }
  // Replayed additions alert like live ones, under the viewer's do-not-disturb as it is now.
  const [settings] = await findSettings(app.db, viewer.userId, [conversationId])
  const alerted = {
    userId: viewer.userId,
    visibleFromSeq: access.member?.visibleFromSeq ?? 1,
    doNotDisturbUntil: settings?.doNotDisturbUntil ?? null,
  }
  // Thread replies outside the conversation alert followers only: the followed roots, read once when
  // the replay first holds such a reply.
  let followed: Promise<Set<number>> | null = null
  // One users loader for the whole replay: each page's senders are read once, not once per page.
  const users = subscription.loaders().users
  // The senders of each read are loaded before its pages go out and held (see loadUser): a replayed
  // event's sender is then a plain value, not a promise, so its execution completes synchronously.
  const held = new Map<number, UserRecord>()
  // The next rows are read while these are delivered, so the stream never waits on the database.
  let next: Promise<MessageRecord[]> | null = read(sincePts)
  while (next) {
    const rows: MessageRecord[] = await next
    next = rows.length === REPLAY_READ ? read(rows.at(-1)!.pts) : null
    await holdSenders(users, held, rows)
    for (let start = 0; start < rows.length; start += REPLAY_PAGE) {
      const page = rows.slice(start, start + REPLAY_PAGE)
      const loaders = subscription.loaders()
      loaders.users = users
      loaders.heldUsers = held
      const now = new Date()
      if (page.some((m) => !m.inConversation)) followed ??= findFollowedRoots(app.db, viewer.userId, conversationId)
      const follows = followed && (await followed)
      loaders.conversations.prime(conversationId, access)
      for (const message of page) loaders.messages.prime(message, message)
      app.hub.observer.replayed(page.length)
      yield {
        payloads: page.map((message) => {
          const kind = kindOf({
            status: message.status,
            edited: message.editedAt !== null,
            reacted: message.reactionsPts === message.pts,
          })
          return {
            typename: 'MessageEvent',
            kind,
            pts: message.pts,
            message,
            alert: alertRule.alerts(
              kind,
              message,
              {
                ...alerted,
                followsThread: message.threadRootSeq !== null && !!follows?.has(message.threadRootSeq),
              },
              now,
            ),
          }
        }),
        loaders,
      }
    }
  }
  subscription.delivered.set(
    conversationId,
    Math.max(subscription.delivered.get(conversationId) ?? 0, untilPts, sincePts),
  )
}

/** Puts the senders of `rows` the loader finds in `held`; a missing or failed one stays the loader's to answer (a field error, as before). */
async function holdSenders(
  users: Loaders['users'],
  held: Map<number, UserRecord>,
  rows: readonly MessageRecord[],
): Promise<void> {
  const ids = new Set<number>()
  for (const m of rows) if (m.senderId !== null && !held.has(m.senderId)) ids.add(m.senderId)
  if (ids.size === 0) return
  for (const user of await users.loadMany([...ids])) if (user && !(user instanceof Error)) held.set(user.id, user)
}
