import type { ConversationType, HistoryVisibility, MemberRole, PostingPolicy } from '../generated/prisma/enums.ts'
import { dateFromMs, toConversation, toMember, type ConversationRecord, type MemberRecord } from './records.ts'
import { queryPooled } from './pooled.ts'
import { Prisma, epochMs, planIndependentIds, type Conn } from './sql.ts'
import { CONVERSATION_COLUMNS, MEMBER_JSON, currentMembership, membershipOfId } from './fragments.ts'

export type ConversationRow = Parameters<typeof toConversation>[0]
export type MemberRow = Parameters<typeof toMember>[0]
type AccessRow = ConversationRow & { member: MemberRow | null }

export type ConversationAccess = { conversation: ConversationRecord; member: MemberRecord | null }

// Member rows read as JSON carry their timestamps as strings.
export const toMemberFromJson = (m: MemberRow) =>
  toMember({ ...m, lastReadAt: date(m.lastReadAt), mutedUntil: date(m.mutedUntil), joinedAt: date(m.joinedAt)! })
const toAccess = (r: AccessRow): ConversationAccess => ({
  conversation: toConversation(r),
  member: r.member ? toMemberFromJson(r.member) : null,
})
const date = (v: Date | string | null) => (v === null ? null : new Date(v))

/** Conversations among distinct `ids` with the viewer's current membership (null when not a member), for batched access checks. */
export async function findConversationsForUser(
  conn: Conn,
  ids: readonly number[],
  userId: number,
): Promise<ConversationAccess[]> {
  const rows = await queryPooled<AccessRow>(
    conn,
    Prisma.sql`
    SELECT ${CONVERSATION_COLUMNS}, ${MEMBER_JSON}
    FROM unnest(${planIndependentIds(ids)}) AS wanted(id)
    CROSS JOIN LATERAL (SELECT * FROM conversations c WHERE c.id = wanted.id OFFSET 0) c
    LEFT JOIN LATERAL ${membershipOfId(userId, Prisma.sql`c.id`)} ON true`,
  )
  return rows.map(toAccess)
}

/**
 * A conversation `c` with the user's membership `cm` (currentMembership: null columns when none) as a
 * JSON array in AccessTuple's order, for statements that return it inside a JSON value (a history
 * page, a sync difference): no keys to write and read, timestamps as epoch milliseconds.
 */
export const ACCESS_TUPLE = Prisma.sql`json_build_array(c.id, c.type, c.title, c.history_visibility, c.last_seq, c.last_pts,
  ${epochMs('c.last_activity_at')}, ${epochMs('c.created_at')}, cm.user_id, cm.role, cm.visible_from_seq, cm.last_read_seq,
  ${epochMs('cm.last_read_at')}, ${epochMs('cm.muted_until')}, ${epochMs('cm.joined_at')}, c.posting_policy,
  c.retention_seconds, c.retained_from_seq, c.legal_hold)`
export type AccessTuple = [
  id: number,
  type: ConversationType,
  title: string | null,
  historyVisibility: HistoryVisibility,
  lastSeq: number,
  lastPts: number,
  lastActivityAt: number,
  createdAt: number,
  userId: number | null,
  role: MemberRole,
  visibleFromSeq: number,
  lastReadSeq: number,
  lastReadAt: number | null,
  mutedUntil: number | null,
  joinedAt: number,
  postingPolicy: PostingPolicy,
  retentionSeconds: number | null,
  retainedFromSeq: number,
  legalHold: boolean,
]
/** One conversation's findConversationsForUser row as an ACCESS_TUPLE inside a larger statement (null when none). */
export const accessTupleOf = (conversationId: number, userId: number) =>
  Prisma.sql`(SELECT ${ACCESS_TUPLE} FROM conversations c ${currentMembership(userId)} WHERE c.id = ${conversationId})`
export const accessFromTuple = (t: AccessTuple): ConversationAccess => ({
  conversation: {
    id: t[0],
    type: t[1],
    title: t[2],
    historyVisibility: t[3],
    lastSeq: t[4],
    lastPts: t[5],
    lastActivityAt: new Date(t[6]),
    createdAt: new Date(t[7]),
    postingPolicy: t[15],
    retentionSeconds: t[16],
    retainedFromSeq: t[17],
    legalHold: t[18],
  },
  member:
    t[8] === null
      ? null
      : {
          conversationId: t[0],
          userId: t[8],
          role: t[9],
          visibleFromSeq: t[10],
          lastReadSeq: t[11],
          lastReadAt: dateFromMs(t[12]),
          mutedUntil: dateFromMs(t[13]),
          joinedAt: new Date(t[14]),
        },
})

export async function insertConversation(
  conn: Conn,
  c: {
    type: ConversationType
    title: string | null
    historyVisibility: HistoryVisibility
    privateKey?: string
    createdById: number
  },
): Promise<ConversationRecord | null> {
  const rows = await conn.$queryRaw<ConversationRow[]>`
    INSERT INTO conversations AS c (type, title, history_visibility, private_key, created_by_id)
    VALUES (${c.type}::"ConversationType", ${c.title}, ${c.historyVisibility}::"HistoryVisibility", ${c.privateKey ?? null}, ${c.createdById})
    ON CONFLICT (private_key) DO NOTHING
    RETURNING ${CONVERSATION_COLUMNS}`
  return rows[0] ? toConversation(rows[0]) : null
}

export async function findConversationIdByPrivateKey(conn: Conn, privateKey: string): Promise<number | null> {
  const rows = await conn.$queryRaw<{ id: bigint }[]>`SELECT id FROM conversations WHERE private_key = ${privateKey}`
  return rows[0] ? Number(rows[0].id) : null
}

export async function findConversationType(conn: Conn, id: number): Promise<ConversationType | null> {
  const rows = await conn.$queryRaw<{ type: ConversationType }[]>`SELECT type FROM conversations WHERE id = ${id}`
  return rows[0]?.type ?? null
}

export async function updatePostingPolicy(conn: Conn, id: number, policy: PostingPolicy): Promise<void> {
  await conn.$executeRaw`UPDATE conversations SET posting_policy = ${policy}::"PostingPolicy" WHERE id = ${id}`
}

export async function updateConversationTitle(conn: Conn, id: number, title: string): Promise<void> {
  await conn.$executeRaw`UPDATE conversations SET title = ${title} WHERE id = ${id}`
}
