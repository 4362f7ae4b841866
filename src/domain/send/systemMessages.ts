import type { Tx } from '../../db/client.ts'
import type { RealtimeEvent } from '../../realtime/events.ts'
import { appendMessages } from '../../store/messages.ts'
import type { ConversationRecord } from '../../store/records.ts'

type SystemEvent =
  | 'CONVERSATION_CREATED'
  | 'MEMBERS_ADDED'
  | 'MEMBER_REMOVED'
  | 'MEMBER_LEFT'
  | 'TITLE_CHANGED'
  | 'ROLE_CHANGED'
  | 'MEMBER_MUTED'
  | 'CALL_STARTED'
  | 'CALL_ENDED'
  | 'MESSAGE_PINNED'
  | 'MESSAGE_UNPINNED'
  | 'FRIEND_ADDED'
  | 'NOTICE'

/** The stored content of a SYSTEM message; `seq` names the message a pin notice is about. */
export type SystemContentRecord = {
  event: SystemEvent
  actorId: number | null
  targetIds: number[]
  text: string | null
  seq?: number
}

/**
 * Writes a SYSTEM message through the same seq allocation as user messages, directed to `visibleTo`
 * (empty: every member). The caller holds the row lock; `conversation` has the counters read under it.
 */
export async function writeSystemMessage(
  tx: Tx,
  conversation: Pick<ConversationRecord, 'id' | 'lastSeq' | 'lastPts'>,
  content: SystemContentRecord,
  visibleTo: number[] = [],
): Promise<RealtimeEvent> {
  const [message] = await appendMessages(tx, conversation.id, conversation, [
    {
      senderType: 'SYSTEM',
      senderId: null,
      kind: 'SYSTEM',
      clientMessageId: null,
      content,
      quotedSeq: null,
      mentionUserIds: [],
      mentionAll: false,
      visibleTo,
    },
  ])
  return { type: 'message', kind: 'ADDED', conversationId: conversation.id, seq: message!.seq, pts: message!.pts }
}
