import type { Tx } from '../../db/client.ts'
import { badInput, limitReached } from '../core/errors.ts'
import { parseId } from '../core/ids.ts'
import type { RealtimeEvent } from '../../realtime/events.ts'
import {
  applySendEffects,
  clearMarkedUnread,
  countPinned,
  writeDraft,
  writeSettings,
  type SendSettings,
  type SettingsPatch,
} from '../../store/conversationSettings.ts'
import type { MessageRecord } from '../../store/records.ts'
import { touchMemberships } from '../../store/sync.ts'
import { lockUser } from '../../store/users.ts'
import { accessConversation } from '../policy/access.ts'
import { type App, type Viewer } from '../core/app.ts'
import { transact } from '../core/transact.ts'
import { parseText } from '../send/content.ts'
import { LIMITS } from '../core/limits.ts'
import { alertRule } from '../live/alertRule.ts'
import {
  checkReferences,
  parseMentionRanges,
  parseQuoted,
  parseUserIds,
  rangeMentions,
  type MentionRangeInput,
} from '../send/references.ts'

/**
 * Every write of a member's own state of a conversation (do-not-disturb, pin, archive, mark unread,
 * draft) is in this module, and each one goes through `changed`, in its transaction.
 */

type Change = { userId: number; conversationId: number }

/**
 * The one place where a committed settings or draft change becomes what is published: a
 * ConversationUpdatedEvent on that user's own topic (their other devices), for nobody else.
 */
function changed(changes: readonly Change[]): RealtimeEvent[] {
  return changes.map((c) => ({ type: 'conversationUpdated', userId: c.userId, conversationId: c.conversationId }))
}

/**
 * changed() for one viewer's own write, which account sync must also list (decision 0080). A send's
 * effects need no stamp: the send moves the conversation's pts, which lists it for every member.
 */
async function viewerChanged(tx: Tx, viewer: Viewer, conversationId: number): Promise<RealtimeEvent[]> {
  await touchMemberships(tx, viewer.userId, [conversationId])
  return changed([{ userId: viewer.userId, conversationId }])
}

export type SettingsInput = {
  doNotDisturbUntil?: Date | null
  pinned?: boolean | null
  archived?: boolean | null
  markedUnread?: boolean | null
}

/** Omitted fields stay as they are; explicit null is meaningful only for doNotDisturbUntil (off). */
function parsePatch(input: SettingsInput): SettingsPatch {
  const flag = (name: 'pinned' | 'archived' | 'markedUnread') => {
    const value = input[name]
    if (value === null) throw badInput(`${name} takes true or false; omit it to leave it unchanged`, name)
    return value
  }
  return {
    doNotDisturbUntil: input.doNotDisturbUntil,
    pinned: flag('pinned'),
    archived: flag('archived'),
    markedUnread: flag('markedUnread'),
  }
}

/**
 * updateConversationSettings for the viewer only. Pinning one more conversation than the configured
 * limit is LIMIT_REACHED; the viewer's pins serialize on their user row, so concurrent pins cannot
 * pass it together. Returns the conversation id.
 */
export async function updateConversationSettings(
  app: App,
  viewer: Viewer,
  conversationId: string,
  input: SettingsInput,
): Promise<number> {
  const id = parseId(conversationId, 'Conversation')
  const patch = parsePatch(input)
  return transact(app, async (tx) => {
    await accessConversation(tx, viewer, id, { lock: false })
    if (patch.pinned) await checkPinLimit(tx, app, viewer, id)
    await writeSettings(tx, id, viewer.userId, patch)
    return { result: id, events: await viewerChanged(tx, viewer, id) }
  })
}

async function checkPinLimit(tx: Tx, app: App, viewer: Viewer, conversationId: number): Promise<void> {
  await lockUser(tx, viewer.userId)
  const limit = app.settings.pinnedConversationsLimit
  // Pinning a pinned conversation again is a no-op, so it is not counted against itself.
  if ((await countPinned(tx, viewer.userId, conversationId)) >= limit) {
    throw limitReached(`at most ${limit} conversations can be pinned; unpin one first`, limit)
  }
}

export type DraftInput = {
  text: string
  quotedMessageId?: string | null
  mentionUserIds?: readonly string[] | null
  mentionRanges?: readonly MentionRangeInput[] | null
}

/** A draft's mentions: the ids named, and those its ranges name (checked against the text as a message's are). */
function parseDraftMentions(input: DraftInput, text: string) {
  const mentionRanges = parseMentionRanges(text, input.mentionRanges ?? [], 'draft.mentionRanges')
  const named = parseUserIds(input.mentionUserIds, 'draft.mentionUserIds', LIMITS.mentionsPerMessage)
  const mentionUserIds = [...new Set([...named, ...rangeMentions({ mentionRanges }).userIds])]
  return { mentionUserIds, mentionRanges }
}

/**
 * saveDraft: the text under a text message's limits, a quoted message the viewer may see in the same
 * conversation, mentioned users who are members, and mention ranges under a message's rules (the
 * @all right is checked when the message is sent); null clears. Returns the conversation id.
 */
export async function saveDraft(
  app: App,
  viewer: Viewer,
  conversationId: string,
  input: DraftInput | null,
): Promise<number> {
  const id = parseId(conversationId, 'Conversation')
  const text = input && parseText(input.text, 'draft.text')
  const parsed = input && {
    text: text!,
    quoted: parseQuoted(input.quotedMessageId, id),
    ...parseDraftMentions(input, text!),
  }
  return transact(app, async (tx) => {
    await accessConversation(tx, viewer, id, { lock: false })
    if (parsed) await checkReferences(tx, viewer, id, { userIds: parsed.mentionUserIds, quoted: parsed.quoted })
    await writeDraft(
      tx,
      id,
      viewer.userId,
      parsed && {
        text: parsed.text,
        quotedSeq: parsed.quoted?.seq ?? null,
        mentionUserIds: parsed.mentionUserIds,
        mentionRanges: parsed.mentionRanges,
      },
    )
    return { result: id, events: await viewerChanged(tx, viewer, id) }
  })
}

/**
 * In the sends' transaction, for each conversation it appended to: the senders' drafts are cleared,
 * and an archived conversation comes back for each member a new message alerts (the
 * MessageEvent.alert rule). `touched`: the rows the conversation lock read for the send
 * (settingsTouchedBySend). One statement for all of them.
 */
export async function settingsAfterSend(
  tx: Tx,
  sent: readonly { conversationId: number; messages: readonly MessageRecord[]; touched: readonly SendSettings[] }[],
): Promise<RealtimeEvent[]> {
  const now = new Date()
  const effects = sent.flatMap(({ conversationId, messages, touched }) => {
    const senders = new Set(messages.map((m) => m.senderId))
    return touched.flatMap((s) => {
      const clearDraft = s.hasDraft && senders.has(s.userId)
      // A message appended in this transaction lies inside every current member's JOINED window.
      const member = { userId: s.userId, visibleFromSeq: 1, doNotDisturbUntil: s.doNotDisturbUntil }
      const unarchive = s.archived && messages.some((m) => alertRule.alerts('ADDED', m, member, now))
      return clearDraft || unarchive ? [{ conversationId, userId: s.userId, clearDraft, unarchive }] : []
    })
  })
  if (!effects.length) return []
  await applySendEffects(tx, effects)
  return changed(effects)
}

/** In markConversationRead's transaction: reading clears the viewer's markedUnread. */
export async function settingsAfterRead(tx: Tx, viewer: Viewer, conversationId: number): Promise<RealtimeEvent[]> {
  return (await clearMarkedUnread(tx, conversationId, viewer.userId)) ? viewerChanged(tx, viewer, conversationId) : []
}
