import type { UserKind } from '../generated/prisma/enums.ts'
import { queryPooled } from './pooled.ts'
import { toUser, type UserRecord } from './records.ts'
import { type SearchDocument } from './searchDocuments.ts'
import { Prisma, bigintArray, type Conn } from './sql.ts'
import { USER_COLUMNS } from './fragments.ts'

/**
 * Locks the user's row until the transaction ends: one user's changes under a per-user limit (pinned
 * conversations, saved stickers) serialize, so two concurrent ones cannot both pass it. NO KEY UPDATE:
 * writes that only reference the user (their sends, reads) do not wait.
 */
export async function lockUser(conn: Conn, userId: number): Promise<void> {
  await conn.$queryRaw`SELECT 1 FROM users WHERE id = ${userId} FOR NO KEY UPDATE`
}

export async function findUsersByIds(conn: Conn, ids: readonly number[]): Promise<UserRecord[]> {
  const rows = await queryPooled<Parameters<typeof toUser>[0]>(
    conn,
    Prisma.sql`
    SELECT ${USER_COLUMNS} FROM users u WHERE u.id = ANY(${bigintArray(ids)})`,
  )
  return rows.map(toUser)
}

/** What a token's check needs of its user. */
export type UserStanding = { id: number; kind: UserKind; deactivated: boolean }

export async function findUserByHandle(conn: Conn, handle: string): Promise<UserStanding | null> {
  const rows = await conn.$queryRaw<
    { id: bigint; kind: UserKind; deactivated: boolean }[]
  >`SELECT id, kind, deactivated_at IS NOT NULL AS deactivated FROM users WHERE handle = ${handle}`
  return rows[0] ? { id: Number(rows[0].id), kind: rows[0].kind, deactivated: rows[0].deactivated } : null
}

/** Deactivates or reactivates the user; null when there is no such user. */
export async function setDeactivated(conn: Conn, userId: number, deactivated: boolean): Promise<UserRecord | null> {
  const rows = await conn.$queryRaw<Parameters<typeof toUser>[0][]>`
    UPDATE users u SET deactivated_at = CASE WHEN ${deactivated} THEN COALESCE(u.deactivated_at, now()) END
    WHERE u.id = ${userId}
    RETURNING ${USER_COLUMNS}`
  return rows[0] ? toUser(rows[0]) : null
}

/** A user to write, with the search document of its handle and display name. */
export type UserDraft = { handle: string; displayName: string; kind: UserKind; searchDocument: SearchDocument }

/** Creates the user unless the handle exists (then keeps it as it is). */
export async function ensureUser(conn: Conn, user: UserDraft): Promise<UserStanding> {
  const rows = await conn.$queryRaw<{ id: bigint; kind: UserKind; deactivated: boolean }[]>`
    INSERT INTO users (handle, display_name, kind, search_document)
    VALUES (${user.handle}, ${user.displayName}, ${user.kind}::"UserKind", ${user.searchDocument}::tsvector)
    ON CONFLICT (handle) DO UPDATE SET handle = EXCLUDED.handle
    RETURNING id, kind, deactivated_at IS NOT NULL AS deactivated`
  return { id: Number(rows[0]!.id), kind: rows[0]!.kind, deactivated: rows[0]!.deactivated }
}

/** Inserts or updates by handle, in input order. */
export async function upsertUsers(conn: Conn, users: UserDraft[]): Promise<UserRecord[]> {
  const rows = await conn.$queryRaw<Parameters<typeof toUser>[0][]>`
    INSERT INTO users AS u (handle, display_name, kind, search_document)
    SELECT * FROM unnest(${users.map((u) => u.handle)}::varchar[], ${users.map((u) => u.displayName)}::varchar[], ${users.map((u) => u.kind)}::"UserKind"[],
      ${users.map((u) => u.searchDocument)}::tsvector[])
    ON CONFLICT (handle) DO UPDATE SET display_name = EXCLUDED.display_name, kind = EXCLUDED.kind, search_document = EXCLUDED.search_document, updated_at = now()
    RETURNING ${USER_COLUMNS}`
  const byHandle = new Map(rows.map((r) => [r.handle, toUser(r)]))
  return users.map((u) => byHandle.get(u.handle)!)
}

export async function countExistingUsers(conn: Conn, ids: readonly number[]): Promise<number> {
  const rows = await conn.$queryRaw<
    { n: number }[]
  >`SELECT count(*)::int AS n FROM users WHERE id = ANY(${bigintArray(ids)})`
  return rows[0]!.n
}
