import type { MessageKey } from '../domain/core/index.ts'
import { MESSAGE_COLUMNS, notRecalled, readerMembership, visibleTo, type Reader } from './fragments.ts'
import { toMessage, type MessageRecord, type MessageRow } from './records.ts'
import { queryPooled } from './pooled.ts'
import { Prisma, bigintArray, type Conn } from './sql.ts'

export type PinRecord = { message: MessageRecord; pinnedById: number; pinnedAt: Date }

const onePin = (key: MessageKey) => Prisma.sql`p.conversation_id = ${key.conversationId} AND p.seq = ${key.seq}`

/**
 * Whether the message is pinned, and how many pins of the conversation count against the limit
 * (recalled messages have dropped out and free their place). One statement, under the caller's lock.
 */
export async function findPinState(conn: Conn, key: MessageKey): Promise<{ pinned: boolean; count: number }> {
  const [row] = await conn.$queryRaw<{ pinned: boolean; count: bigint }[]>`
    SELECT EXISTS (SELECT 1 FROM pinned_messages p WHERE ${onePin(key)}) AS pinned,
      (SELECT count(*) FROM pinned_messages p JOIN messages m ON m.conversation_id = p.conversation_id AND m.seq = p.seq
       WHERE p.conversation_id = ${key.conversationId} AND ${notRecalled}) AS count`
  return { pinned: row!.pinned, count: Number(row!.count) }
}

export async function insertPin(conn: Conn, key: MessageKey, pinnedById: number): Promise<void> {
  await conn.$executeRaw`INSERT INTO pinned_messages (conversation_id, seq, pinned_by_id) VALUES (${key.conversationId}, ${key.seq}, ${pinnedById})`
}

export async function deletePin(conn: Conn, key: MessageKey): Promise<void> {
  await conn.$executeRaw`DELETE FROM pinned_messages p WHERE ${onePin(key)}`
}

/**
 * The pins of each conversation whose messages the reader may see (the shared visibility rule) and
 * that are not recalled, newest pin first: one statement for any number of conversations.
 */
export async function listVisiblePins(
  conn: Conn,
  reader: Reader,
  conversationIds: readonly number[],
): Promise<PinRecord[]> {
  const rows = await queryPooled<MessageRow & { pinnedById: number | bigint; pinnedAt: Date }>(
    conn,
    Prisma.sql`
    SELECT ${MESSAGE_COLUMNS}, p.pinned_by_id AS "pinnedById", p.pinned_at AS "pinnedAt"
    FROM pinned_messages p
    JOIN messages m ON m.conversation_id = p.conversation_id AND m.seq = p.seq
    ${readerMembership(reader)}
    WHERE p.conversation_id = ANY(${bigintArray(conversationIds)}) AND ${notRecalled} AND ${visibleTo(reader)}
    ORDER BY p.pinned_at DESC, p.seq DESC`,
  )
  return rows.map(({ pinnedById, pinnedAt, ...row }) => ({
    message: toMessage(row),
    pinnedById: Number(pinnedById),
    pinnedAt,
  }))
}
