import type { Db } from '../../db/client.ts'
import type { MessageKind, UserRecord } from '../../store/records.ts'
import { lockConversationFor } from '../../store/conversationLocks.ts'
import {
  findConversationsToIndex,
  findUnindexedMessages,
  findUnindexedUsers,
  insertDocuments,
  updateUserDocuments,
} from '../../store/searchBackfill.ts'
import { type SearchDocument } from '../../store/searchDocuments.ts'
import { type ForwardedItemRecord } from '../send/content.ts'
import { documentVector } from './text.ts'

/** The kinds whose content has searchable text. */
const SEARCHABLE_KINDS: readonly MessageKind[] = ['TEXT', 'FILE', 'CARD', 'FORWARD', 'MATERIAL']

/**
 * What search reads of stored content (docs/search.md "What is searched"): the text of a TEXT
 * message, a file's name, a card's `data.title` and a material's title, and for a merged forward
 * the same of each forwarded item. Snippets and highlights are cut from these same fields.
 */
export function searchableFields(kind: MessageKind, content: unknown): string[] {
  const c = (content ?? {}) as Record<string, unknown>
  const text = (v: unknown) => (typeof v === 'string' ? [v] : [])
  switch (kind) {
    case 'TEXT':
      return text(c.text)
    case 'FILE':
      return text(c.name)
    case 'CARD':
      return text((c.data as Record<string, unknown> | undefined)?.title)
    case 'MATERIAL':
      return text(c.title)
    case 'FORWARD':
      return ((c.items ?? []) as ForwardedItemRecord[]).flatMap((item) => searchableFields(item.kind, item.content))
    default:
      return []
  }
}

export const messageDocument = (kind: MessageKind, content: unknown): SearchDocument =>
  documentVector(searchableFields(kind, content))

/** People are found by handle and display name. */
export const userDocument = (user: { handle: string; displayName: string }): SearchDocument =>
  documentVector([user.handle, user.displayName])

const BATCH = 2000

/**
 * Writes the documents of messages and users that have none: rows written before search existed
 * (`npm run search:backfill`). Idempotent. Each batch of one conversation's messages is read and
 * indexed under that conversation's lock, like every write to it, so a recall or edit either
 * happened before (and is what gets indexed) or waits and then replaces the document.
 */
export async function backfillSearchDocuments(db: Db): Promise<{ messages: number; users: number }> {
  const done = { messages: 0, users: 0 }
  for (
    let afterId = 0, ids: number[];
    (ids = await findConversationsToIndex(db, SEARCHABLE_KINDS, afterId, 100)).length;
    afterId = ids.at(-1)!
  ) {
    for (const conversationId of ids) {
      for (let afterSeq = 0, more = true; more;) {
        more = await db.$transaction(async (tx) => {
          await lockConversationFor(tx, conversationId, [])
          const batch = await findUnindexedMessages(tx, conversationId, SEARCHABLE_KINDS, afterSeq, BATCH)
          const rows = batch
            .map((m) => ({ ...m, document: messageDocument(m.kind, m.content) }))
            .filter((r) => r.document)
          await insertDocuments(tx, rows)
          done.messages += rows.length
          afterSeq = batch.at(-1)?.seq ?? afterSeq
          return batch.length === BATCH
        })
      }
    }
  }
  for (
    let afterId = 0, users: UserRecord[];
    (users = await findUnindexedUsers(db, afterId, BATCH)).length;
    afterId = users.at(-1)!.id
  ) {
    await updateUserDocuments(
      db,
      users.map((u) => ({ ...u, document: userDocument(u) })),
    )
    done.users += users.length
  }
  return done
}
