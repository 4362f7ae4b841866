/**
 * What domain actions hand to realtime after commit. Payloads carry keys only: each subscriber's
 * resolver reads what that subscriber may see.
 */
export type MessageEventKind = 'ADDED' | 'EDITED' | 'RECALLED' | 'REACTIONS_CHANGED' | 'STREAM_ENDED'

export type RealtimeEvent =
  | {
      type: 'message'
      kind: MessageEventKind
      conversationId: number
      seq: number
      pts: number
      /** Who changed it, when not the message's sender or recaller (a reaction): webhooks leave out their owner's own changes. */
      actorId?: number
    }
  | { type: 'read'; conversationId: number; userId: number; lastReadSeq: number; receiptsVisible: boolean }
  | { type: 'typing'; conversationId: number; userId: number; expiresAt: string; status?: string | null }
  /** An ephemeral signal (never stored); `toUserIds` null: every member. */
  | {
      type: 'signal'
      conversationId: number
      userId: number
      signalType: string
      payload: unknown
      toUserIds: number[] | null
      sentAt: string
    }
  /** The next delta of a streamed message (never stored as such); `text` is the whole text so far. */
  | { type: 'stream'; conversationId: number; seq: number; sequence: number; delta: string; text: string }
  /** `actorId`: who added or removed the user (the user when joining or leaving), for webhooks (membership.changed). */
  | { type: 'joined'; conversationId: number; userId: number; actorId?: number }
  | { type: 'removed'; conversationId: number; userId: number; actorId?: number }
  | { type: 'reminderDue'; userId: number; conversationId: number; seq: number; remindAt: string }
  | { type: 'messageAction'; userId: number; conversationId: number; seq: number }
  /** The user's own settings or draft of the conversation changed (for their other devices). */
  | { type: 'conversationUpdated'; userId: number; conversationId: number }
  /** The user's friendship with `peerId` changed (both users get one). */
  | { type: 'friendship'; userId: number; peerId: number; actorId?: number }
  /** `subjectId` went online or offline; `userId` is a PRIVATE-chat peer who hears it (PresenceEvent). */
  | { type: 'presence'; userId: number; subjectId: number; online: boolean; lastSeenAt: string | null }
  /** An operator deactivated or reactivated the user (every instance drops what it cached of them). */
  | { type: 'account'; userId: number; handle: string; deactivated: boolean }

export const conversationTopic = (id: number) => `conversation:${id}`
export const userTopic = (id: number) => `user:${id}`
/** Account changes, rare and needed by every instance (each one's token checks), not per subscriber. */
export const ACCOUNTS_TOPIC = 'accounts'
