import type { Tx } from '../../db/client.ts'
import { badInput, notFound } from '../core/errors.ts'
import { messageGlobalId, messageKeyText, parseMessageId, type MessageKey } from '../core/ids.ts'
import type { RealtimeEvent } from '../../realtime/events.ts'
import { findVisibleMessages } from '../../store/messages.ts'
import type { MessageRecord } from '../../store/records.ts'
import { touchMemberships } from '../../store/sync.ts'
import { activateActions, deactivateActions, listActionMessages, type UserAction } from '../../store/userActions.ts'
import { type App, type Viewer } from '../core/app.ts'
import { transact } from '../core/transact.ts'
import { keysetCursor } from '../core/cursors.ts'
import { pageSize } from '../core/input.ts'
import { requireVisibleMessage } from './lifecycle.ts'
import { LIMITS } from '../core/limits.ts'
import { forwardPage, type Connection } from '../core/paging.ts'
import { refuseRecalled } from '../policy/policy.ts'

/** Parses 1..100 message ids, without duplicates, in key order (so concurrent calls lock rows in one order). */
function parseMessageIds(ids: readonly string[]): MessageKey[] {
  if (ids.length < 1 || ids.length > LIMITS.messagesPerAction)
    throw badInput(`pass 1..${LIMITS.messagesPerAction} message ids`, 'messageIds')
  const unique = new Map(ids.map((id) => parseMessageId(id)).map((k) => [messageKeyText(k), k]))
  return [...unique.values()].sort((a, b) => a.conversationId - b.conversationId || a.seq - b.seq)
}

const actionEvents = (viewer: Viewer, keys: readonly MessageKey[]): RealtimeEvent[] =>
  keys.map((k) => ({ type: 'messageAction', userId: viewer.userId, conversationId: k.conversationId, seq: k.seq }))

/**
 * Ends the viewer's delete-for-me of `keys`, then requires that the viewer may see every one under
 * the shared visibility rule (which hides the viewer's own deletions, hence restore first). Any
 * other id is NOT_FOUND for the whole call, and the transaction rolls back. Returns the keys that
 * were deleted.
 */
async function restoreVisible(tx: Tx, viewer: Viewer, keys: MessageKey[]): Promise<MessageKey[]> {
  const restored = await deactivateActions(tx, viewer.userId, keys, 'DELETE')
  if ((await findVisibleMessages(tx, viewer, keys)).length !== keys.length) throw notFound('Message')
  return restored
}

/**
 * Hides messages from the viewer only (history, lastMessage, unread counts, favourites, reminders).
 * Answers every id given, once; already-deleted ones stay deleted.
 */
export async function deleteMessagesForMe(app: App, viewer: Viewer, messageIds: readonly string[]): Promise<string[]> {
  const keys = parseMessageIds(messageIds)
  return transact(app, async (tx) => {
    const wasDeleted = new Set((await restoreVisible(tx, viewer, keys)).map(messageKeyText))
    const deleted = (await activateActions(tx, viewer.userId, keys, 'DELETE')).filter(
      (k) => !wasDeleted.has(messageKeyText(k)),
    )
    // Their conversations' unread counts and last messages changed for the viewer's devices too.
    await touchMemberships(
      tx,
      viewer.userId,
      deleted.map((k) => k.conversationId),
    )
    return { result: keys.map(messageGlobalId), events: actionEvents(viewer, deleted) }
  })
}

/** Brings messages the viewer deleted back; answers every id given, once. */
export async function restoreMessagesForMe(app: App, viewer: Viewer, messageIds: readonly string[]): Promise<string[]> {
  const keys = parseMessageIds(messageIds)
  return transact(app, async (tx) => {
    const restored = await restoreVisible(tx, viewer, keys)
    await touchMemberships(
      tx,
      viewer.userId,
      restored.map((k) => k.conversationId),
    )
    return { result: keys.map(messageGlobalId), events: actionEvents(viewer, restored) }
  })
}

/**
 * Sets or clears one of the viewer's per-message marks on a message they may see. Setting one on a
 * recalled message is MESSAGE_RECALLED; clearing always works.
 */
async function setMark(
  app: App,
  viewer: Viewer,
  messageId: string,
  action: Exclude<UserAction, 'DELETE'>,
  set: { on: boolean; remindAt?: Date },
): Promise<MessageRecord> {
  const key = parseMessageId(messageId)
  return transact(app, async (tx) => {
    const message = await requireVisibleMessage(tx, viewer, key)
    if (set.on) refuseRecalled(message)
    const changed = set.on
      ? await activateActions(tx, viewer.userId, [key], action, set.remindAt ?? null)
      : await deactivateActions(tx, viewer.userId, [key], action)
    return { result: message, events: actionEvents(viewer, changed) }
  })
}

/** Favouriting an already favourite message keeps its place in Viewer.favorites. */
export const setFavorite = (app: App, viewer: Viewer, messageId: string, favorite: boolean) =>
  setMark(app, viewer, messageId, 'FAVORITE', { on: favorite })

/** Each reminder set (also to a past time, which fires at once) is delivered once; null clears it. */
export const setReminder = (app: App, viewer: Viewer, messageId: string, remindAt: Date | null) =>
  setMark(app, viewer, messageId, 'REMINDER', remindAt ? { on: true, remindAt } : { on: false })

/** Each list's cursor: its sort time, then the message key. */
const CURSORS = {
  FAVORITE: keysetCursor('favorite', ['time', 'id', 'id']),
  REMINDER: keysetCursor('reminder', ['time', 'id', 'id']),
}

async function listMarked(
  app: App,
  viewer: Viewer,
  action: 'FAVORITE' | 'REMINDER',
  args: { first?: number | null; after?: string | null; dueBefore?: Date | null },
): Promise<Connection<MessageRecord>> {
  const cursor = CURSORS[action]
  const limit = pageSize(args.first, 'first')
  const decoded = cursor.decode(args.after, 'after')
  const after = decoded && { at: decoded[0], conversationId: decoded[1], seq: decoded[2] }
  const rows = await listActionMessages(app.db, viewer, {
    action,
    after,
    atBefore: args.dueBefore ?? null,
    limit: limit + 1,
  })
  return forwardPage(rows, limit, (m) => cursor.encode(m.actionAt, m.conversationId, m.seq), after !== null)
}

/** Viewer.favorites: most recently favourited first; recalled and deleted-for-me messages are left out. */
export const listFavorites = (app: App, viewer: Viewer, args: { first?: number | null; after?: string | null }) =>
  listMarked(app, viewer, 'FAVORITE', args)

/** Viewer.reminders: soonest first (fired ones too, until cleared), optionally only those due before a time. */
export const listReminders = (
  app: App,
  viewer: Viewer,
  args: { first?: number | null; after?: string | null; dueBefore?: Date | null },
) => listMarked(app, viewer, 'REMINDER', args)
