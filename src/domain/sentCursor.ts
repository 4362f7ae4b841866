import { badInput } from '../errors.ts'
import { decodeCursor, encodeCursor } from './paging.ts'

/** A keyset position in a newest-first list of messages across conversations. */
export type SentKey = { sentAt: Date; conversationId: number; seq: number }

/** Opaque cursors over (sentAt, conversationId, seq), with their own prefix per list. */
export function sentCursor(prefix: string) {
  return {
    encode: (m: SentKey) => encodeCursor(prefix, `${m.sentAt.toISOString()}|${m.conversationId}|${m.seq}`),
    decode(after: string | null | undefined): SentKey | null {
      if (after == null) return null
      const [at = '', conversationId = '', seq = ''] = decodeCursor(after, prefix, 'after').split('|')
      const sentAt = new Date(at)
      const id = /^[1-9][0-9]{0,15}$/
      if (Number.isNaN(sentAt.getTime()) || !id.test(conversationId) || !id.test(seq)) throw badInput('after is not a valid cursor', 'after')
      return { sentAt, conversationId: Number(conversationId), seq: Number(seq) }
    },
  }
}
