import { beforeAll, describe, expect, it } from 'vitest'
import { parseId } from '../../src/domain/core/ids.ts'
import { findConversationsForUser } from '../../src/store/conversations.ts'
import { readConversationPage, readHistoryPage, type PageOptions } from '../../src/store/history.ts'
import { appendMessages, findVisibleMessages, type MessageDraft } from '../../src/store/messages.ts'
import { findUsersByIds } from '../../src/store/users.ts'
import { newUsers, testApp } from '../support/harness.ts'
import { createGroup } from '../support/operations.ts'

/**
 * A history page comes as one JSON value in a format of its own (store/history.ts): each record it
 * maps must equal the one the messages loader reads through Prisma, for every field, whatever the
 * message's kind and state.
 */

let conversationId: number
let readerId: number
let senderIds: number[]
let seqs: { quotesHidden: number; deleted: number; last: number; newest: number }

const draft = (senderId: number, d: Partial<MessageDraft> & Pick<MessageDraft, 'kind' | 'content'>): MessageDraft => ({
  senderType: 'USER',
  senderId,
  clientMessageId: `rows-${Math.random()}`,
  quotedSeq: null,
  mentionUserIds: [],
  mentionAll: false,
  visibleTo: [],
  ...d,
})

beforeAll(async () => {
  const [owner, reader, other] = await newUsers(3)
  const id = (await createGroup(owner!, [reader!, other!])).id
  conversationId = parseId(id, 'Conversation')
  const [ownerId, rId, otherId] = [owner!, reader!, other!].map((u) => parseId(u.id, 'User'))
  readerId = rId!
  senderIds = [ownerId!, otherId!]
  const { db } = testApp()
  // seq 1 is the group's CONVERSATION_CREATED system message.
  await db.$transaction((tx) =>
    appendMessages(tx, conversationId, { lastSeq: 1, lastPts: 1 }, [
      draft(ownerId!, {
        kind: 'TEXT',
        content: { text: 'mentions the reader' },
        mentionUserIds: [readerId],
        clientMessageId: null,
      }), // 2
      draft(otherId!, { kind: 'IMAGE', content: { url: 'https://x/i.png', width: 3, height: 4 }, quotedSeq: 2 }), // 3
      draft(ownerId!, {
        kind: 'FILE',
        content: { url: 'https://x/f', name: 'f.pdf', sizeBytes: 9 },
        visibleTo: [readerId],
      }), // 4: directed at the reader
      draft(otherId!, { kind: 'TEXT', content: { text: 'not for the reader' }, visibleTo: [ownerId!] }), // 5: hidden from the reader
      draft(ownerId!, { kind: 'TEXT', content: { text: 'quotes a hidden one' }, quotedSeq: 5 }), // 6
      draft(rId!, {
        kind: 'CARD',
        content: { cardType: 'poll', data: { q: 'ü?', n: [1, 2] } },
        mentionAll: true,
        forwardedFrom: { senderName: 'Ann', sentAt: '2026-01-02T03:04:05.678Z', conversationTitle: null },
      }), // 7
      draft(ownerId!, { kind: 'TEXT', content: { text: 'before the edit' } }), // 8: edited
      draft(otherId!, { kind: 'TEXT', content: { text: 'recalled' } }), // 9: recalled, and quoted by 11
      draft(ownerId!, { kind: 'TEXT', content: { text: 'deleted for the reader' } }), // 10
      draft(otherId!, { kind: 'STICKER', content: { stickerId: 's', url: 'https://x/s' }, quotedSeq: 9 }), // 11
      // Plain ones, whose defaults are not in the statement's sparse list (decision 0261), after and between those that are.
      draft(rId!, { kind: 'TEXT', content: { text: 'plain' } }), // 12
      draft(otherId!, { kind: 'IMAGE', content: { url: 'https://x/p.png', width: 1, height: 1 } }), // 13
    ]),
  )
  seqs = { quotesHidden: 6, deleted: 10, last: 11, newest: 13 }
  await db.$executeRaw`UPDATE messages SET content = '{"text":"after the edit"}', edited_at = '2026-12-01 10:00:00.123456+00', pts = 20
    WHERE conversation_id = ${conversationId} AND seq = 8`
  await db.$executeRaw`UPDATE messages SET status = 'RECALLED', recalled_at = now(), recalled_by_id = ${otherId}, pts = 21
    WHERE conversation_id = ${conversationId} AND seq = 9`
  await db.$executeRaw`UPDATE messages SET reactions_pts = 22, pts = 22 WHERE conversation_id = ${conversationId} AND seq = 3`
  await db.$executeRaw`INSERT INTO message_user_actions (conversation_id, seq, user_id, action) VALUES (${conversationId}, 10, ${readerId}, 'DELETE')`
  await db.$executeRaw`UPDATE users SET handle = handle || '-renamed', display_name = 'Renamed' WHERE id = ${otherId}`
})

const reader = () => ({ userId: readerId })
const all = (n: number) => Array.from({ length: n }, (_, i) => ({ conversationId, seq: i + 1 }))

describe('a history page read as one JSON value', () => {
  it('maps every message, quoted message and sender as the messages and users loaders read them', async () => {
    const { db } = testApp()
    const expected = (await findVisibleMessages(db, reader(), all(seqs.newest))).sort((a, b) => b.seq - a.seq)
    expect(expected.map((m) => m.seq).slice(0, 2)).toEqual([13, 12])
    expect(expected.map((m) => m.seq)).not.toContain(5)
    expect(expected.map((m) => m.seq)).not.toContain(seqs.deleted)
    const page = await readHistoryPage(
      db,
      reader(),
      conversationId,
      { afterSeq: null, beforeSeq: null, from: 'end', limit: 20, quoted: true },
      null,
    )
    expect(page.messages).toEqual(expected)
    expect(page.quotedSeqs.sort()).toEqual([2, 5, 9])
    expect(page.quoted.sort((a, b) => a.seq - b.seq)).toEqual(
      await findVisibleMessages(
        db,
        reader(),
        [2, 9].map((seq) => ({ conversationId, seq })),
      ),
    )
    const users = await findUsersByIds(db, [...new Set([...senderIds, readerId])])
    expect(page.users.sort((a, b) => a.id - b.id)).toEqual(users.sort((a, b) => a.id - b.id))
    expect(page.users.find((u) => u.id === senderIds[1])).toMatchObject({
      handle: expect.stringMatching(/-renamed$/),
      displayName: 'Renamed',
    })
  })

  it('maps the same in either direction, between cursors, with the conversation and the other side of the cursor', async () => {
    const { db } = testApp()
    const opts: PageOptions = { afterSeq: 2, beforeSeq: seqs.last, from: 'start', limit: 3, quoted: true }
    const page = await readConversationPage(db, reader(), conversationId, opts, { afterSeq: null, beforeSeq: 3 })
    expect(page.messages).toEqual(
      await findVisibleMessages(
        db,
        reader(),
        [3, 4, 6].map((seq) => ({ conversationId, seq })),
      ),
    )
    expect(page.beyond).toBe(true)
    expect(page.access).toEqual((await findConversationsForUser(db, [conversationId], readerId))[0])
    const back = await readHistoryPage(
      db,
      reader(),
      conversationId,
      { ...opts, from: 'end' },
      { afterSeq: seqs.last - 1, beforeSeq: null },
    )
    expect(back.messages.map((m) => m.seq)).toEqual([9, 8, 7])
    expect(back.beyond).toBe(true)
  })

  it('reads the quoted messages and their senders only when asked to', async () => {
    const { db } = testApp()
    // seq 3 (by the other sender) quotes seq 2 (by the owner).
    const opts: PageOptions = { afterSeq: 2, beforeSeq: null, from: 'start', limit: 1, quoted: true }
    const withQuoted = await readHistoryPage(db, reader(), conversationId, opts, null)
    const without = await readHistoryPage(db, reader(), conversationId, { ...opts, quoted: false }, null)
    expect(without.messages).toEqual(withQuoted.messages)
    expect([
      withQuoted.quotedSeqs,
      withQuoted.quoted.map((m) => m.seq),
      withQuoted.users.map((u) => u.id).sort(),
    ]).toEqual([[2], [2], [...senderIds].sort()])
    // Nothing looked up, so nothing for the loaders to take as hidden.
    expect([without.quotedSeqs, without.quoted, without.users.map((u) => u.id)]).toEqual([[], [], [senderIds[1]]])
  })

  it('reads a page inside a transaction (through Prisma) the same as on the pool', async () => {
    const { db } = testApp()
    const opts: PageOptions = { afterSeq: null, beforeSeq: null, from: 'end', limit: 20, quoted: true }
    const pooled = await readHistoryPage(db, reader(), conversationId, opts, null)
    const inTransaction = await db.$transaction((tx) => readHistoryPage(tx, reader(), conversationId, opts, null))
    expect(inTransaction).toEqual(pooled)
  })
})
