import { describe, expect, it } from 'vitest'
import { parseId } from '../../src/domain/core/ids.ts'
import { DuplicateIdempotencyKey, appendMessages, type MessageDraft } from '../../src/store/messages.ts'
import { newUsers, testApp } from '../support/harness.ts'
import { createGroup, lastSeqOf, sendText } from '../support/operations.ts'

/**
 * The store maps constraint violations by constraint name (DESIGN rule 6). The send path never
 * reaches the idempotency constraint (its lookup runs under the conversation lock), so this calls
 * the store directly, as a send that slipped past the lookup would.
 */
describe('constraint violations', () => {
  it('come back as DuplicateIdempotencyKey for a stored clientMessageId, and unmapped for any other constraint', async () => {
    const [alice] = await newUsers(1)
    const group = await createGroup(alice!, [])
    const sent = (await sendText(alice!, group.id, 'first', 'taken-key')).message
    const conversationId = parseId(group.id, 'Conversation')
    const draft = (clientMessageId: string): MessageDraft => ({
      senderType: 'USER',
      senderId: parseId(alice!.id, 'User'),
      kind: 'TEXT',
      clientMessageId,
      content: { text: 'again' },
      quotedSeq: null,
      mentionUserIds: [],
      mentionAll: false,
      visibleTo: [],
    })
    const append = (last: { lastSeq: number; lastPts: number }, key: string) =>
      testApp().db.$transaction((tx) => appendMessages(tx, conversationId, last, [draft(key)]))

    await expect(append({ lastSeq: sent.seq, lastPts: sent.pts }, 'taken-key')).rejects.toBeInstanceOf(
      DuplicateIdempotencyKey,
    )
    // A seq already taken violates the primary key: not an idempotency conflict.
    const otherConstraint = await append({ lastSeq: sent.seq - 1, lastPts: sent.pts }, 'fresh-key').catch(
      (error: unknown) => error,
    )
    expect(otherConstraint).toBeInstanceOf(Error)
    expect(otherConstraint).not.toBeInstanceOf(DuplicateIdempotencyKey)
    expect(await lastSeqOf(alice!, group.id)).toBe(sent.seq)
  })
})
