import { queryPooled } from './pooled.ts'
import { Prisma, bigintArray, type Conn } from './sql.ts'

/** A member's own state of a conversation; a member without a row has everything off. */
export type SettingsRecord = {
  conversationId: number
  userId: number
  doNotDisturbUntil: Date | null
  pinnedAt: Date | null
  archived: boolean
  markedUnread: boolean
  draft: DraftRecord | null
}
/** Where a mention stands in the draft's text (UTF-16 units), as TEXT content stores it. */
type DraftMentionRange = { start: number; length: number; userId?: number; all?: true }
export type DraftRecord = {
  text: string
  quotedSeq: number | null
  mentionUserIds: number[]
  mentionRanges: DraftMentionRange[]
  updatedAt: Date
}

export const noSettings = (conversationId: number, userId: number): SettingsRecord => ({
  conversationId,
  userId,
  doNotDisturbUntil: null,
  pinnedAt: null,
  archived: false,
  markedUnread: false,
  draft: null,
})

type Big = bigint | number
type SettingsRow = {
  conversationId: Big
  userId: Big
  doNotDisturbUntil: Date | null
  pinnedAt: Date | null
  archived: boolean
  markedUnread: boolean
  draftText: string | null
  draftQuotedSeq: Big | null
  draftMentionIds: Big[] | null
  draftMentionRanges: DraftMentionRange[] | null
  draftUpdatedAt: Date | null
}

const SETTINGS_COLUMNS = Prisma.sql`cs.conversation_id AS "conversationId", cs.user_id AS "userId",
  cs.do_not_disturb_until AS "doNotDisturbUntil", cs.pinned_at AS "pinnedAt", cs.archived, cs.marked_unread AS "markedUnread",
  cs.draft_text AS "draftText", cs.draft_quoted_seq AS "draftQuotedSeq", cs.draft_mention_ids AS "draftMentionIds",
  cs.draft_mention_ranges AS "draftMentionRanges", cs.draft_updated_at AS "draftUpdatedAt"`

const toSettings = (r: SettingsRow): SettingsRecord => ({
  conversationId: Number(r.conversationId),
  userId: Number(r.userId),
  doNotDisturbUntil: r.doNotDisturbUntil,
  pinnedAt: r.pinnedAt,
  archived: r.archived,
  markedUnread: r.markedUnread,
  draft:
    r.draftText === null
      ? null
      : {
          text: r.draftText,
          quotedSeq: r.draftQuotedSeq === null ? null : Number(r.draftQuotedSeq),
          mentionUserIds: (r.draftMentionIds ?? []).map(Number),
          mentionRanges: r.draftMentionRanges ?? [],
          updatedAt: r.draftUpdatedAt!,
        },
})

/** The user's settings rows among `conversationIds` (missing ones have none). */
export async function findSettings(
  conn: Conn,
  userId: number,
  conversationIds: readonly number[],
): Promise<SettingsRecord[]> {
  const rows = await queryPooled<SettingsRow>(
    conn,
    Prisma.sql`
    SELECT ${SETTINGS_COLUMNS} FROM conversation_settings cs
    WHERE cs.user_id = ${userId} AND cs.conversation_id = ANY(${bigintArray(conversationIds)})`,
  )
  return rows.map(toSettings)
}

/** What a send needs of a member's settings row: whether it comes back from the archive, whether a draft goes. */
export type SendSettings = { userId: number; archived: boolean; doNotDisturbUntil: Date | null; hasDraft: boolean }

/**
 * A subquery for the conversation lock's statement (store/conversations.ts): as JSON, the parts a
 * send reads of the current members' settings rows it may change, the archived ones and the senders'
 * drafts (not the drafts themselves: the lock holds the row while they would be serialized).
 */
export const settingsTouchedBySend = (conversationId: Prisma.Sql, senderIds: Prisma.Sql) => Prisma.sql`(
  SELECT coalesce(json_agg(json_build_object('userId', cs.user_id, 'archived', cs.archived,
    'doNotDisturbUntil', cs.do_not_disturb_until, 'hasDraft', cs.draft_text IS NOT NULL)), '[]')
  FROM conversation_settings cs
  JOIN conversation_members cm ON cm.conversation_id = cs.conversation_id AND cm.user_id = cs.user_id AND cm.left_at IS NULL
  WHERE cs.conversation_id = ${conversationId} AND (cs.archived OR (cs.draft_text IS NOT NULL AND cs.user_id = ANY(${senderIds}))))`

/** A row of settingsTouchedBySend (JSON carries timestamps as strings, ids as numbers). */
export const sendSettingsFromJson = (
  r: Omit<SendSettings, 'doNotDisturbUntil'> & { doNotDisturbUntil: string | null },
): SendSettings => ({
  ...r,
  doNotDisturbUntil: r.doNotDisturbUntil === null ? null : new Date(r.doNotDisturbUntil),
})

/** Fields to set; an absent field is left as it is. `pinned: true` keeps an existing pin's time. */
export type SettingsPatch = {
  doNotDisturbUntil?: Date | null
  pinned?: boolean
  archived?: boolean
  markedUnread?: boolean
}

/** Writes the given fields of one member's settings in one statement (a row is created on first use). */
export async function writeSettings(
  conn: Conn,
  conversationId: number,
  userId: number,
  patch: SettingsPatch,
): Promise<void> {
  // The inserted row holds the patch (defaults elsewhere); on conflict only the given fields move.
  const sets: Prisma.Sql[] = []
  if (patch.doNotDisturbUntil !== undefined) sets.push(Prisma.sql`do_not_disturb_until = EXCLUDED.do_not_disturb_until`)
  if (patch.pinned !== undefined)
    sets.push(
      Prisma.sql`pinned_at = ${patch.pinned ? Prisma.sql`coalesce(cs.pinned_at, EXCLUDED.pinned_at)` : Prisma.sql`NULL`}`,
    )
  if (patch.archived !== undefined) sets.push(Prisma.sql`archived = EXCLUDED.archived`)
  if (patch.markedUnread !== undefined) sets.push(Prisma.sql`marked_unread = EXCLUDED.marked_unread`)
  // With nothing to set (an empty input), a no-op assignment keeps the statement valid.
  if (!sets.length) sets.push(Prisma.sql`archived = cs.archived`)
  await conn.$executeRaw`
    INSERT INTO conversation_settings AS cs (conversation_id, user_id, do_not_disturb_until, pinned_at, archived, marked_unread)
    VALUES (${conversationId}, ${userId}, ${patch.doNotDisturbUntil ?? null}, ${patch.pinned ? Prisma.sql`clock_timestamp()` : null},
      ${patch.archived ?? false}, ${patch.markedUnread ?? false})
    ON CONFLICT (conversation_id, user_id) DO UPDATE SET ${Prisma.join(sets, ', ')}`
}

/** Replaces (or with null clears) one member's draft: every part of it in one statement. */
export async function writeDraft(
  conn: Conn,
  conversationId: number,
  userId: number,
  draft: Omit<DraftRecord, 'updatedAt'> | null,
): Promise<void> {
  const text = draft?.text ?? null
  const quotedSeq = draft?.quotedSeq ?? null
  const mentions = bigintArray(draft?.mentionUserIds ?? [])
  const ranges = draft?.mentionRanges.length ? JSON.stringify(draft.mentionRanges) : null
  await conn.$executeRaw`
    INSERT INTO conversation_settings AS cs (conversation_id, user_id, draft_text, draft_quoted_seq, draft_mention_ids,
      draft_mention_ranges, draft_updated_at)
    VALUES (${conversationId}, ${userId}, ${text}, ${quotedSeq}, ${mentions}, ${ranges}::jsonb,
      CASE WHEN ${text}::text IS NULL THEN NULL ELSE clock_timestamp() END)
    ON CONFLICT (conversation_id, user_id) DO UPDATE SET draft_text = EXCLUDED.draft_text, draft_quoted_seq = EXCLUDED.draft_quoted_seq,
      draft_mention_ids = EXCLUDED.draft_mention_ids, draft_mention_ranges = EXCLUDED.draft_mention_ranges,
      draft_updated_at = EXCLUDED.draft_updated_at`
}

/** What a send does to one member's settings row: clear their draft (they sent), bring the conversation back from the archive. */
export type SendEffect = { conversationId: number; userId: number; clearDraft: boolean; unarchive: boolean }

/** Applies the effects of the sends of one transaction, across its conversations; one statement. */
export async function applySendEffects(conn: Conn, effects: readonly SendEffect[]): Promise<void> {
  await conn.$executeRaw`
    UPDATE conversation_settings cs SET
      archived = cs.archived AND NOT e.unarchive,
      draft_text = CASE WHEN e.clear_draft THEN NULL ELSE cs.draft_text END,
      draft_quoted_seq = CASE WHEN e.clear_draft THEN NULL ELSE cs.draft_quoted_seq END,
      draft_mention_ids = CASE WHEN e.clear_draft THEN '{}' ELSE cs.draft_mention_ids END,
      draft_mention_ranges = CASE WHEN e.clear_draft THEN NULL ELSE cs.draft_mention_ranges END,
      draft_updated_at = CASE WHEN e.clear_draft THEN NULL ELSE cs.draft_updated_at END
    FROM unnest(${bigintArray(effects.map((e) => e.conversationId))}, ${bigintArray(effects.map((e) => e.userId))},
      ${effects.map((e) => e.clearDraft)}::boolean[], ${effects.map((e) => e.unarchive)}::boolean[]) AS e(conversation_id, user_id, clear_draft, unarchive)
    WHERE cs.conversation_id = e.conversation_id AND cs.user_id = e.user_id`
}

/** Clears markedUnread; true when it was set. */
export async function clearMarkedUnread(conn: Conn, conversationId: number, userId: number): Promise<boolean> {
  const changed = await conn.$executeRaw`
    UPDATE conversation_settings SET marked_unread = false WHERE conversation_id = ${conversationId} AND user_id = ${userId} AND marked_unread`
  return changed > 0
}

/** How many of the user's current conversations other than `exceptId` are pinned. */
export async function countPinned(conn: Conn, userId: number, exceptId: number): Promise<number> {
  const rows = await conn.$queryRaw<{ n: number }[]>`
    SELECT count(*)::int AS n FROM conversation_settings cs
    JOIN conversation_members cm ON cm.conversation_id = cs.conversation_id AND cm.user_id = cs.user_id AND cm.left_at IS NULL
    WHERE cs.user_id = ${userId} AND cs.pinned_at IS NOT NULL AND cs.conversation_id <> ${exceptId}`
  return rows[0]!.n
}
