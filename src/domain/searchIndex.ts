import type { Db } from '../db/client.ts'
import type { MessageKind, UserRecord } from '../store/records.ts'
import { findUnindexedMessages, findUnindexedUsers, insertDocuments, updateUserDocuments, type SearchDocument } from '../store/search.ts'
import type { ForwardedItemRecord } from './content.ts'
import { documentVector } from './searchText.ts'

/** The kinds whose content has searchable text. */
export const SEARCHABLE_KINDS: readonly MessageKind[] = ['TEXT', 'FILE', 'CARD', 'FORWARD', 'MATERIAL']

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

export const messageDocument = (kind: MessageKind, content: unknown): SearchDocument => documentVector(searchableFields(kind, content))

/** People are found by handle and display name. */
export const userDocument = (user: { handle: string; displayName: string }): SearchDocument => documentVector([user.handle, user.displayName])

const BATCH = 2000

/**
 * Writes the documents of messages and users that have none: rows written before search existed
 * (`npm run search:backfill`). Idempotent, in batches of one statement to read and one to write;
 * returns how many rows it indexed.
 */
export async function backfillSearchDocuments(db: Db): Promise<{ messages: number; users: number }> {
  const done = { messages: 0, users: 0 }
  for (let after = { conversationId: 0, seq: 0 }; ; ) {
    const batch = await findUnindexedMessages(db, SEARCHABLE_KINDS, after, BATCH)
    if (!batch.length) break
    const rows = batch.map((m) => ({ ...m, document: messageDocument(m.kind, m.content) })).filter((r) => r.document)
    await insertDocuments(db, rows)
    done.messages += rows.length
    after = batch.at(-1)!
  }
  for (let afterId = 0; ; ) {
    const batch: UserRecord[] = await findUnindexedUsers(db, afterId, BATCH)
    if (!batch.length) break
    await updateUserDocuments(db, batch.map((u) => ({ id: u.id, document: userDocument(u) })))
    done.users += batch.length
    afterId = batch.at(-1)!.id
  }
  return done
}
