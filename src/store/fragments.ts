import { Prisma, planIndependent, planIndependentIds } from './sql.ts'

/**
 * The SQL every read path shares: column lists, the membership joins and the visibility rules.
 * Every other store file may import this one; it imports none of them.
 */

/** A user row's columns, from `users u`: what toUser reads. */
export const USER_COLUMNS = Prisma.sql`u.id, u.handle, u.display_name AS "displayName", u.kind,
  u.deactivated_at IS NOT NULL AS deactivated`

export const CONVERSATION_COLUMNS = Prisma.sql`c.id, c.type, c.title, c.history_visibility AS "historyVisibility", c.posting_policy AS "postingPolicy",
  c.last_seq AS "lastSeq", c.last_pts AS "lastPts", c.last_activity_at AS "lastActivityAt", c.created_at AS "createdAt",
  c.retention_seconds AS "retentionSeconds", c.retained_from_seq AS "retainedFromSeq", c.legal_hold AS "legalHold"`
export const MEMBER_COLUMNS = Prisma.sql`cm.conversation_id AS "conversationId", cm.user_id AS "userId", cm.role,
  cm.visible_from_seq AS "visibleFromSeq", cm.last_read_seq AS "lastReadSeq", cm.last_read_at AS "lastReadAt",
  cm.muted_until AS "mutedUntil", cm.joined_at AS "joinedAt"`

export const memberJson = Prisma.sql`json_build_object(
  'conversationId', cm.conversation_id, 'userId', cm.user_id, 'role', cm.role, 'visibleFromSeq', cm.visible_from_seq,
  'lastReadSeq', cm.last_read_seq, 'lastReadAt', cm.last_read_at, 'mutedUntil', cm.muted_until, 'joinedAt', cm.joined_at)`
export const MEMBER_JSON = Prisma.sql`CASE WHEN cm.user_id IS NULL THEN NULL ELSE ${memberJson} END AS member`

/** Joins the user's current membership of conversation `c` as `cm` (its columns null when not a member). */
export const currentMembership = (userId: number) => Prisma.sql`
    LEFT JOIN conversation_members cm ON cm.conversation_id = c.id AND cm.user_id = ${userId} AND cm.left_at IS NULL`

/**
 * The user's current membership of conversation `id` as `cm`, found by its key (OFFSET 0 keeps it one
 * lookup per id). With the ids and the user plan-independent (store/sql.ts) the statement keeps one
 * generic plan, and since the planner then does not know how many ids there are, a join it could
 * choose instead would read every membership of the user: 10,000 for some.
 */
export const membershipOfId = (userId: number, id: Prisma.Sql) => Prisma.sql`(SELECT * FROM conversation_members cm
    WHERE cm.conversation_id = ${id} AND cm.user_id = ${planIndependent(userId)} AND cm.left_at IS NULL OFFSET 0) cm`

/** The user's current memberships among distinct `ids` as `cm` (a FROM item), one lookup per id. */
export const membershipsAmong = (userId: number, ids: readonly number[]) =>
  Prisma.sql`unnest(${planIndependentIds(ids)}) AS wanted(id) CROSS JOIN LATERAL ${membershipOfId(userId, Prisma.sql`wanted.id`)}`

export const MESSAGE_COLUMNS = Prisma.sql`m.conversation_id AS "conversationId", m.seq, m.pts, m.sender_type AS "senderType",
  m.sender_id AS "senderId", m.kind, m.client_message_id AS "clientMessageId", m.content, m.quoted_seq AS "quotedSeq",
  m.mention_user_ids AS "mentionUserIds", m.mention_all AS "mentionAll", m.visible_to AS "visibleTo",
  CASE WHEN m.removed THEN 'REMOVED' ELSE m.status::text END AS status,
  m.sent_at AS "sentAt", m.edited_at AS "editedAt", m.recalled_at AS "recalledAt", m.recalled_by_id AS "recalledById",
  m.reactions_pts AS "reactionsPts", m.forwarded_from AS "forwardedFrom"`

/** Who is reading: visibility of a message depends on the reader, never on a per-message member copy. */
export type Reader = { userId: number }

/**
 * The one visibility rule every read path shares: the reader's membership window (visible_from_seq of
 * `cm`, JOINED history), directed messages (visible_to), and the reader's own delete-for-me.
 */
export const visibleTo = (reader: Reader) => visibleToUser(reader.userId)

/** visibleTo for a reader given as a value or as a SQL expression (e.g. each member row's `cm.user_id`). */
export const visibleToUser = (userId: number | Prisma.Sql) => Prisma.sql`
  ${inMembershipWindow} AND ${directedTo(userId)} AND NOT EXISTS (${deletedForUser(userId)})`

/** Message `m` is inside the window of membership `cm` (JOINED history starts it at the join). */
export const inMembershipWindow = Prisma.sql`m.seq >= cm.visible_from_seq`

/** The directed-message rule: message `m` is for everyone, or sent by the user, or directed to them. */
export const directedTo = (userId: number | Prisma.Sql) =>
  Prisma.sql`(cardinality(m.visible_to) = 0 OR m.sender_id = ${userId} OR ${userId} = ANY(m.visible_to))`

/** The user's active delete-for-me of message `m` (a row when there is one). */
export const deletedForUser = (userId: number | Prisma.Sql) => Prisma.sql`
    SELECT 1 FROM message_user_actions ua
    WHERE ua.conversation_id = m.conversation_id AND ua.seq = m.seq AND ua.user_id = ${userId}
      AND ua.action = 'DELETE' AND ua.status = 'ACTIVE'`

/** The recall rule of domain/policy/policy.ts in SQL: recalled messages are not counted, listed or indexed (unread, favourites, reminders, search). */
export const notRecalled = Prisma.sql`m.status <> 'RECALLED'`

/** Joins the reader's current membership row as `cm`. */
export const readerMembership = (reader: Reader) => membershipOf(reader.userId)

/** readerMembership for a reader given as a value or as a SQL expression. */
export const membershipOf = (userId: number | Prisma.Sql) => Prisma.sql`
  JOIN conversation_members cm ON cm.conversation_id = m.conversation_id AND cm.user_id = ${userId} AND cm.left_at IS NULL`
