import type {
  ConversationType,
  HistoryVisibility,
  MemberRole,
  MessageKind,
  MessageStatus,
  PostingPolicy,
  SenderType,
  UserKind,
} from '../generated/prisma/enums.ts'

export type { ConversationType, HistoryVisibility, MemberRole, MessageKind, MessageStatus, PostingPolicy, UserKind }

/** Rows as the rest of the code sees them: BIGINT columns become JS numbers (ids and seqs < 2^53). */
export type UserRecord = { id: number; handle: string; displayName: string; kind: UserKind; deactivated: boolean }

export type ConversationRecord = {
  id: number
  type: ConversationType
  title: string | null
  historyVisibility: HistoryVisibility
  /** ADMINS: only the OWNER and ADMINs send (an announcement group). */
  postingPolicy: PostingPolicy
  lastSeq: number
  lastPts: number
  lastActivityAt: Date
  createdAt: Date
  /** Null: the server default (RETENTION_SECONDS). */
  retentionSeconds: number | null
  /** The oldest seq that may still exist (the retention sweeper advances it). */
  retainedFromSeq: number
  /** Nothing is swept or purged while set. */
  legalHold: boolean
}

export type MemberRecord = {
  conversationId: number
  userId: number
  role: MemberRole
  visibleFromSeq: number
  lastReadSeq: number
  lastReadAt: Date | null
  mutedUntil: Date | null
  joinedAt: Date
}

export type MessageRecord = {
  conversationId: number
  seq: number
  pts: number
  senderType: SenderType
  senderId: number | null
  kind: MessageKind
  clientMessageId: string | null
  content: unknown
  quotedSeq: number | null
  mentionUserIds: number[]
  mentionAll: boolean
  visibleTo: number[]
  /** REMOVED: a takedown, stored as a recall (messages.removed). */
  status: MessageStatus | 'REMOVED'
  sentAt: Date
  editedAt: Date | null
  recalledAt: Date | null
  recalledById: number | null
  /** The pts of the latest reaction change (REACTIONS_CHANGED when it equals pts). */
  reactionsPts: number | null
  /** Set on copies (content.copy): where the original came from, a snapshot. */
  forwardedFrom: ForwardOriginRecord | null
}

export type ForwardOriginRecord = { senderName: string; sentAt: string; conversationTitle: string | null }

type Big = bigint | number
const num = (v: Big) => Number(v)
const numOrNull = (v: Big | null) => (v === null ? null : Number(v))
/** A timestamp read as epoch milliseconds (epochMs), or null. */
export const dateFromMs = (ms: number | null) => (ms === null ? null : new Date(ms))

export const toUser = (r: {
  id: Big
  handle: string
  displayName: string
  kind: UserKind
  deactivated: boolean
}): UserRecord => ({
  id: num(r.id),
  handle: r.handle,
  displayName: r.displayName,
  kind: r.kind,
  deactivated: r.deactivated,
})

export const toConversation = (
  r: Omit<ConversationRecord, 'id' | 'lastSeq' | 'lastPts' | 'retainedFromSeq'> & {
    id: Big
    lastSeq: Big
    lastPts: Big
    retainedFromSeq: Big
  },
): ConversationRecord => ({
  id: num(r.id),
  type: r.type,
  title: r.title,
  historyVisibility: r.historyVisibility,
  postingPolicy: r.postingPolicy,
  lastSeq: num(r.lastSeq),
  lastPts: num(r.lastPts),
  lastActivityAt: r.lastActivityAt,
  createdAt: r.createdAt,
  retentionSeconds: r.retentionSeconds,
  retainedFromSeq: num(r.retainedFromSeq),
  legalHold: r.legalHold,
})

export const toMember = (
  r: Omit<MemberRecord, 'conversationId' | 'userId' | 'visibleFromSeq' | 'lastReadSeq'> & {
    conversationId: Big
    userId: Big
    visibleFromSeq: Big
    lastReadSeq: Big
  },
): MemberRecord => ({
  conversationId: num(r.conversationId),
  userId: num(r.userId),
  role: r.role,
  visibleFromSeq: num(r.visibleFromSeq),
  lastReadSeq: num(r.lastReadSeq),
  lastReadAt: r.lastReadAt,
  mutedUntil: r.mutedUntil,
  joinedAt: r.joinedAt,
})

export type MessageRow = Omit<
  MessageRecord,
  | 'conversationId'
  | 'seq'
  | 'pts'
  | 'senderId'
  | 'quotedSeq'
  | 'mentionUserIds'
  | 'visibleTo'
  | 'recalledById'
  | 'reactionsPts'
> & {
  conversationId: Big
  seq: Big
  pts: Big
  senderId: Big | null
  quotedSeq: Big | null
  mentionUserIds: Big[]
  visibleTo: Big[]
  recalledById: Big | null
  reactionsPts: Big | null
}

export const toMessage = (r: MessageRow): MessageRecord => ({
  conversationId: num(r.conversationId),
  seq: num(r.seq),
  pts: num(r.pts),
  senderType: r.senderType,
  senderId: numOrNull(r.senderId),
  kind: r.kind,
  clientMessageId: r.clientMessageId,
  content: r.content,
  quotedSeq: numOrNull(r.quotedSeq),
  mentionUserIds: r.mentionUserIds.map(num),
  mentionAll: r.mentionAll,
  visibleTo: r.visibleTo.map(num),
  status: r.status,
  sentAt: r.sentAt,
  editedAt: r.editedAt,
  recalledAt: r.recalledAt,
  recalledById: numOrNull(r.recalledById),
  reactionsPts: numOrNull(r.reactionsPts),
  forwardedFrom: r.forwardedFrom,
})
