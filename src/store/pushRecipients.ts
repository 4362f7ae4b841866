import type { MessageKey } from '../domain/core/index.ts'
import type { MessageKind, MessageRecord, MessageStatus } from './records.ts'
import { type Conn } from './sql.ts'

/** What a push notification shows of a message, and what the alert rule reads of it. */
export type PushMessage = MessageKey & {
  senderType: MessageRecord['senderType']
  senderId: number | null
  senderName: string | null
  conversationType: string
  conversationTitle: string | null
  kind: MessageKind
  content: unknown
  status: MessageStatus
  mentionUserIds: number[]
  mentionAll: boolean
  visibleTo: number[]
  /** A thread reply's root (null: a top-level message), and whether the reply shows in the conversation. */
  threadRootSeq: number | null
  inConversation: boolean
}

export async function findPushMessage(conn: Conn, key: MessageKey): Promise<PushMessage | null> {
  const [row] = await conn.$queryRaw<
    (Omit<PushMessage, 'conversationId' | 'seq' | 'senderId' | 'mentionUserIds' | 'visibleTo' | 'threadRootSeq'> & {
      senderId: bigint | null
      threadRootSeq: bigint | null
      mentionUserIds: bigint[]
      visibleTo: bigint[]
    })[]
  >`
    SELECT m.sender_type::text AS "senderType", m.sender_id AS "senderId", u.display_name AS "senderName",
      c.type::text AS "conversationType", c.title AS "conversationTitle", m.kind::text AS kind, m.content,
      m.status::text AS status, m.mention_user_ids AS "mentionUserIds", m.mention_all AS "mentionAll", m.visible_to AS "visibleTo",
      m.thread_root_seq AS "threadRootSeq", m.in_conversation AS "inConversation"
    FROM messages m JOIN conversations c ON c.id = m.conversation_id LEFT JOIN users u ON u.id = m.sender_id
    WHERE m.conversation_id = ${key.conversationId} AND m.seq = ${key.seq}`
  return row
    ? {
        ...key,
        ...row,
        senderId: row.senderId === null ? null : Number(row.senderId),
        mentionUserIds: row.mentionUserIds.map(Number),
        visibleTo: row.visibleTo.map(Number),
        threadRootSeq: row.threadRootSeq === null ? null : Number(row.threadRootSeq),
      }
    : null
}

/** A current member holding at least one push device: what the alert rule needs of them. */
export type PushCandidate = {
  userId: number
  visibleFromSeq: number
  doNotDisturbUntil: Date | null
  followsThread: boolean
}

/**
 * The next `limit` current members after `afterUserId` (in user id order) that hold a push device:
 * a job walks a conversation of any size in chunks, and resumes after the last chunk it finished.
 * `threadRootSeq`: the message's thread, whose followers it alerts (null: none).
 */
export async function findPushCandidates(
  conn: Conn,
  message: { conversationId: number; threadRootSeq: number | null },
  afterUserId: number,
  limit: number,
): Promise<PushCandidate[]> {
  const { conversationId, threadRootSeq } = message
  const rows = await conn.$queryRaw<
    { userId: bigint; visibleFromSeq: bigint; doNotDisturbUntil: Date | null; followsThread: boolean }[]
  >`
    SELECT cm.user_id AS "userId", cm.visible_from_seq AS "visibleFromSeq", cs.do_not_disturb_until AS "doNotDisturbUntil",
      EXISTS (SELECT FROM thread_followers tf WHERE tf.conversation_id = cm.conversation_id
        AND tf.root_seq = ${threadRootSeq}::bigint AND tf.user_id = cm.user_id AND tf.following) AS "followsThread"
    FROM conversation_members cm
    LEFT JOIN conversation_settings cs ON cs.conversation_id = cm.conversation_id AND cs.user_id = cm.user_id
    WHERE cm.conversation_id = ${conversationId} AND cm.left_at IS NULL AND cm.user_id > ${afterUserId}
      AND EXISTS (SELECT FROM push_devices d WHERE d.user_id = cm.user_id)
    ORDER BY cm.user_id LIMIT ${limit}`
  return rows.map((r) => ({
    userId: Number(r.userId),
    visibleFromSeq: Number(r.visibleFromSeq),
    doNotDisturbUntil: r.doNotDisturbUntil,
    followsThread: r.followsThread,
  }))
}
