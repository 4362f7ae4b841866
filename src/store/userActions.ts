import type { MessageKey } from '../domain/core/index.ts'
import { MESSAGE_COLUMNS, notRecalled, visibleTo, type Reader } from './fragments.ts'
import { toMessage, type MessageRecord, type MessageRow } from './records.ts'
import { queryPooled } from './pooled.ts'
import { Prisma, bigintArray, type Conn } from './sql.ts'

/** Per-user actions on messages; rows are toggled ACTIVE/INACTIVE, never deleted. */
export type UserAction = 'DELETE' | 'FAVORITE' | 'REMINDER'

type KeyRow = { conversationId: bigint; seq: bigint }
const toKey = (r: KeyRow): MessageKey => ({ conversationId: Number(r.conversationId), seq: Number(r.seq) })

const keysTable = (keys: readonly MessageKey[]) =>
  Prisma.sql`unnest(${bigintArray(keys.map((k) => k.conversationId))}, ${bigintArray(keys.map((k) => k.seq))}) AS k(conversation_id, seq)`

/**
 * Makes the user's `action` ACTIVE on each message (with `remindAt` for REMINDER, which re-arms it).
 * Returns the keys whose state changed; a row already ACTIVE with the same reminder keeps its time.
 */
export async function activateActions(
  conn: Conn,
  userId: number,
  keys: readonly MessageKey[],
  action: UserAction,
  remindAt: Date | null = null,
): Promise<MessageKey[]> {
  const rows = await conn.$queryRaw<KeyRow[]>`
    INSERT INTO message_user_actions AS ua (conversation_id, seq, user_id, action, status, remind_at)
    SELECT k.conversation_id, k.seq, ${userId}, ${action}::"UserAction", 'ACTIVE', ${remindAt}::timestamptz FROM ${keysTable(keys)}
    ON CONFLICT (conversation_id, seq, user_id, action) DO UPDATE
      SET status = 'ACTIVE', remind_at = EXCLUDED.remind_at, fired_at = NULL, claimed_until = NULL, updated_at = now()
      WHERE ua.status <> 'ACTIVE' OR ua.remind_at IS DISTINCT FROM EXCLUDED.remind_at OR ua.fired_at IS NOT NULL
    RETURNING ua.conversation_id AS "conversationId", ua.seq`
  return rows.map(toKey)
}

/** Makes the user's `action` INACTIVE on each message; returns the keys that were ACTIVE. */
export async function deactivateActions(
  conn: Conn,
  userId: number,
  keys: readonly MessageKey[],
  action: UserAction,
): Promise<MessageKey[]> {
  const rows = await conn.$queryRaw<KeyRow[]>`
    UPDATE message_user_actions ua SET status = 'INACTIVE', updated_at = now()
    FROM ${keysTable(keys)}
    WHERE ua.conversation_id = k.conversation_id AND ua.seq = k.seq AND ua.user_id = ${userId}
      AND ua.action = ${action}::"UserAction" AND ua.status = 'ACTIVE'
    RETURNING ua.conversation_id AS "conversationId", ua.seq`
  return rows.map(toKey)
}

/** A user's own state of one message, as their other devices are told about it (a recall hides some: domain/policy/policy.ts shownViewerState). */
export type ViewerState = { favorite: boolean; deletedForMe: boolean; remindAt: Date | null }
export const NO_ACTIONS: ViewerState = { favorite: false, deletedForMe: false, remindAt: null }

export type ViewerStateRecord = MessageKey & ViewerState

/** A ViewerState aggregated from the ACTIVE rows `ua` of one user and message. */
export const VIEWER_STATE_COLUMNS = Prisma.sql`bool_or(ua.action = 'FAVORITE') AS favorite, bool_or(ua.action = 'DELETE') AS "deletedForMe",
      max(ua.remind_at) FILTER (WHERE ua.action = 'REMINDER') AS "remindAt"`

/** The user's ACTIVE actions on the messages of `keys` (a relation `k(conversation_id, seq)`), one row per message that has any. */
export const viewerStatesSql = (userId: number, keys: Prisma.Sql) => Prisma.sql`
    SELECT ua.conversation_id AS "conversationId", ua.seq, ${VIEWER_STATE_COLUMNS}
    FROM ${keys}
    JOIN message_user_actions ua ON ua.conversation_id = k.conversation_id AND ua.seq = k.seq
    WHERE ua.user_id = ${userId} AND ua.status = 'ACTIVE'
    GROUP BY ua.conversation_id, ua.seq`

/** The user's ACTIVE actions on each message, one row per message that has any (absent = none). */
export async function findViewerStates(
  conn: Conn,
  userId: number,
  keys: readonly MessageKey[],
): Promise<ViewerStateRecord[]> {
  const rows = await queryPooled<KeyRow & ViewerState>(conn, viewerStatesSql(userId, keysTable(keys)))
  return rows.map((r) => ({ ...toKey(r), favorite: r.favorite, deletedForMe: r.deletedForMe, remindAt: r.remindAt }))
}

/** A position in a per-user action list: the list's sort time, then the message key. */
export type ActionCursor = { at: Date; conversationId: number; seq: number }

/**
 * How each list is ordered: favourites by when they were favourited, newest first (the
 * (user_id, action, status, updated_at) index); reminders by remind_at, soonest first.
 */
const LISTS = {
  FAVORITE: { at: Prisma.sql`ua.updated_at`, descending: true },
  REMINDER: { at: Prisma.sql`ua.remind_at`, descending: false },
} as const

/**
 * A keyset page of the messages on which the reader has `action` ACTIVE, as the reader may see them
 * (the shared visibility rule) and not recalled, each with its list time.
 */
export async function listActionMessages(
  conn: Conn,
  reader: Reader,
  opts: { action: keyof typeof LISTS; after: ActionCursor | null; atBefore: Date | null; limit: number },
): Promise<(MessageRecord & { actionAt: Date })[]> {
  const { at, descending } = LISTS[opts.action]
  const direction = descending ? Prisma.sql`DESC` : Prisma.sql`ASC`
  const after = opts.after
    ? Prisma.sql`AND (${at}, ua.conversation_id, ua.seq) ${descending ? Prisma.sql`<` : Prisma.sql`>`}
        (${opts.after.at}::timestamptz, ${opts.after.conversationId}::bigint, ${opts.after.seq}::bigint)`
    : Prisma.empty
  const rows = await queryPooled<MessageRow & { actionAt: Date }>(
    conn,
    Prisma.sql`
    SELECT ${MESSAGE_COLUMNS}, ${at} AS "actionAt"
    FROM message_user_actions ua
    JOIN messages m ON m.conversation_id = ua.conversation_id AND m.seq = ua.seq
    JOIN conversation_members cm ON cm.conversation_id = m.conversation_id AND cm.user_id = ${reader.userId} AND cm.left_at IS NULL
    WHERE ua.user_id = ${reader.userId} AND ua.action = ${opts.action}::"UserAction" AND ua.status = 'ACTIVE'
      AND ${notRecalled} AND ${visibleTo(reader)}
      ${after}
      ${opts.atBefore ? Prisma.sql`AND ${at} < ${opts.atBefore}::timestamptz` : Prisma.empty}
    ORDER BY ${at} ${direction}, ua.conversation_id ${direction}, ua.seq ${direction}
    LIMIT ${opts.limit}`,
  )
  return rows.map((r) => ({ ...toMessage(r), actionAt: r.actionAt }))
}

export type ClaimedReminder = MessageKey & { userId: number; remindAt: Date }

/**
 * Leases up to `limit` due, unfired reminders for `leaseMs`, skipping rows another instance holds
 * (FOR UPDATE SKIP LOCKED) or has leased: however many schedulers run, one fires each reminder at a
 * time. A lease that expires unfired (its instance died before markRemindersFired) is claimed again.
 */
export async function claimDueReminders(conn: Conn, limit: number, leaseMs: number): Promise<ClaimedReminder[]> {
  const rows = await conn.$queryRaw<(KeyRow & { userId: bigint; remindAt: Date })[]>`
    UPDATE message_user_actions ua SET claimed_until = now() + ${leaseMs} * interval '1 millisecond'
    WHERE (ua.conversation_id, ua.seq, ua.user_id, ua.action) IN (
      SELECT d.conversation_id, d.seq, d.user_id, d.action FROM message_user_actions d
      WHERE d.action = 'REMINDER' AND d.status = 'ACTIVE' AND d.fired_at IS NULL AND d.remind_at <= now()
        AND (d.claimed_until IS NULL OR d.claimed_until <= now())
      ORDER BY d.remind_at
      LIMIT ${limit}
      FOR UPDATE SKIP LOCKED)
    RETURNING ua.conversation_id AS "conversationId", ua.seq, ua.user_id AS "userId", ua.remind_at AS "remindAt"`
  return rows.map((r) => ({ ...toKey(r), userId: Number(r.userId), remindAt: r.remindAt }))
}

/** Marks claimed reminders fired, unless re-armed meanwhile (another remind_at: that one is due on its own). */
export async function markRemindersFired(conn: Conn, reminders: readonly ClaimedReminder[]): Promise<void> {
  await conn.$executeRaw`
    UPDATE message_user_actions ua SET fired_at = now(), claimed_until = NULL
    FROM unnest(${bigintArray(reminders.map((r) => r.conversationId))}, ${bigintArray(reminders.map((r) => r.seq))},
                ${bigintArray(reminders.map((r) => r.userId))}, ${reminders.map((r) => r.remindAt.toISOString())}::timestamptz[]) AS k(conversation_id, seq, user_id, remind_at)
    WHERE ua.conversation_id = k.conversation_id AND ua.seq = k.seq AND ua.user_id = k.user_id
      AND ua.action = 'REMINDER' AND ua.remind_at = k.remind_at AND ua.fired_at IS NULL`
}
