import type { MessageKey } from '../domain/core/index.ts'
import { changeWithPts, oneMessage } from './lifecycle.ts'
import { MESSAGE_COLUMNS, notRecalled } from './fragments.ts'
import { toMessage, type MessageRecord, type MessageRow } from './records.ts'
import { indexChanged, type SearchDocument } from './searchDocuments.ts'
import { Prisma, bigintArray, type Conn } from './sql.ts'

/** A message as stored, whoever reads it (updateCard: the sender or, for a SYSTEM card, an operator, checked after). */
export async function findMessage(conn: Conn, key: MessageKey): Promise<MessageRecord | null> {
  const rows = await conn.$queryRaw<MessageRow[]>`SELECT ${MESSAGE_COLUMNS} FROM messages m WHERE ${oneMessage(key)}`
  return rows[0] ? toMessage(rows[0]) : null
}

/**
 * Replaces a card's content (its data, actions and updatedAt) with `pts`, in place: no edit version,
 * status and editedAt unchanged. Null when the message is recalled.
 */
export function replaceCard(
  conn: Conn,
  key: MessageKey,
  change: { content: unknown; pts: number; searchDocument: SearchDocument | null },
): Promise<MessageRecord | null> {
  return changeWithPts(
    conn,
    key.conversationId,
    change.pts,
    Prisma.sql`UPDATE messages m SET content = ${JSON.stringify(change.content)}::jsonb, pts = ${change.pts}
      WHERE ${oneMessage(key)} AND ${notRecalled}`,
    indexChanged(change.searchDocument),
  )
}

/**
 * Records a user's choice on a card: one per user and card, another action replaces it. True when
 * it changed (a new choice or another action), false when the same action was pressed again.
 */
export async function recordPress(
  conn: Conn,
  key: MessageKey,
  press: { userId: number; actionId: string; value: unknown },
): Promise<boolean> {
  const rows = await conn.$queryRaw<unknown[]>`
    INSERT INTO card_action_presses (conversation_id, seq, user_id, action_id, value)
    VALUES (${key.conversationId}, ${key.seq}, ${press.userId}, ${press.actionId}, ${JSON.stringify(press.value ?? null)}::jsonb)
    ON CONFLICT (conversation_id, seq, user_id) DO UPDATE
      SET action_id = EXCLUDED.action_id, value = EXCLUDED.value, pressed_at = clock_timestamp()
      WHERE card_action_presses.action_id <> EXCLUDED.action_id
    RETURNING 1`
  return rows.length > 0
}

/** The action `userId` pressed on each card, where there is one. */
export async function findPressedActions(
  conn: Conn,
  userId: number,
  keys: readonly MessageKey[],
): Promise<(MessageKey & { actionId: string })[]> {
  const rows = await conn.$queryRaw<{ conversationId: bigint; seq: bigint; actionId: string }[]>`
    SELECT p.conversation_id AS "conversationId", p.seq, p.action_id AS "actionId"
    FROM unnest(${bigintArray(keys.map((k) => k.conversationId))}, ${bigintArray(keys.map((k) => k.seq))}) AS k(conversation_id, seq)
    JOIN card_action_presses p ON p.conversation_id = k.conversation_id AND p.seq = k.seq AND p.user_id = ${userId}`
  return rows.map((r) => ({ conversationId: Number(r.conversationId), seq: Number(r.seq), actionId: r.actionId }))
}
