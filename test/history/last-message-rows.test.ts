import { beforeAll, describe, expect, it } from 'vitest'
import { parseId } from '../../src/domain/core/ids.ts'
import { findLastVisibleMessages, findVisibleMessages } from '../../src/store/messages.ts'
import type { MessageRecord } from '../../src/store/records.ts'
import { newUsers, testApp } from '../support/harness.ts'
import { createGroup, sendText } from '../support/operations.ts'

/**
 * An inbox page's last messages come as one JSON value of columns (findLastVisibleMessages,
 * store/columnarMessages.ts): each record must equal the one the messages loader reads through Prisma,
 * for every field, in the conversation it came from (the ids are a column of their own).
 */

let viewerId: number
let ids: number[]

beforeAll(async () => {
  const [viewer, other] = await newUsers(2)
  const groups = []
  for (let i = 0; i < 5; i++) groups.push((await createGroup(viewer!, [other!])).id)
  ids = groups.map((id) => parseId(id, 'Conversation'))
  viewerId = parseId(viewer!.id, 'User')!
  const otherId = parseId(other!.id, 'User')
  const [a, b, c, , e] = ids
  const { db } = testApp()
  // a: its last message edited, mentioning the viewer, with a reaction and a copy's origin.
  await sendText(other!, groups[0]!, 'first')
  await sendText(other!, groups[0]!, 'second')
  await db.$executeRaw`UPDATE messages SET mention_user_ids = ARRAY[${viewerId}]::bigint[], content = '{"text":"edited"}', status = 'EDITED',
    edited_at = '2026-12-01 10:00:00.123456+00', reactions_pts = 9, forwarded_from = '{"senderName":"Ann","sentAt":"2026-01-02T03:04:05.678Z","conversationTitle":null}'
    WHERE conversation_id = ${a} AND seq = 3`
  // b: the last message recalled; c: the last one directed at someone else (the viewer's last is the one before);
  // d: nothing but the system message; e: the last one deleted for the viewer.
  await sendText(other!, groups[1]!, 'recalled')
  await db.$executeRaw`UPDATE messages SET status = 'RECALLED', recalled_at = now(), recalled_by_id = ${otherId} WHERE conversation_id = ${b} AND seq = 2`
  await sendText(other!, groups[2]!, 'seen')
  await sendText(other!, groups[2]!, 'not for the viewer')
  await db.$executeRaw`UPDATE messages SET visible_to = ARRAY[${otherId}]::bigint[] WHERE conversation_id = ${c} AND seq = 3`
  await sendText(other!, groups[4]!, 'deleted for the viewer')
  await db.$executeRaw`INSERT INTO message_user_actions (conversation_id, seq, user_id, action) VALUES (${e}, 2, ${viewerId}, 'DELETE')`
})

const reader = () => ({ userId: viewerId })
const byConversation = <T extends { conversationId: number }>(xs: T[]) =>
  [...xs].sort((x, y) => x.conversationId - y.conversationId)

describe("an inbox page's last messages as JSON columns", () => {
  it('reads each last message as the messages loader reads it (the newest the viewer may see)', async () => {
    const { db } = testApp()
    const visible = await findVisibleMessages(
      db,
      reader(),
      ids.flatMap((conversationId) => [1, 2, 3].map((seq) => ({ conversationId, seq }))),
    )
    const newest = new Map<number, MessageRecord>()
    for (const m of visible) if ((newest.get(m.conversationId)?.seq ?? 0) < m.seq) newest.set(m.conversationId, m)
    const last = await findLastVisibleMessages(db, reader(), ids)
    expect(byConversation(last)).toEqual(byConversation([...newest.values()]))
    const [a, b, c, d, e] = ids
    expect(last.find((m) => m.conversationId === a)).toMatchObject({
      seq: 3,
      status: 'EDITED',
      editedAt: new Date('2026-12-01T10:00:00.123Z'),
      mentionUserIds: [viewerId],
      reactionsPts: 9,
      forwardedFrom: { senderName: 'Ann' },
    })
    expect(last.find((m) => m.conversationId === b)).toMatchObject({
      seq: 2,
      status: 'RECALLED',
      recalledAt: expect.any(Date),
    })
    expect(last.find((m) => m.conversationId === c)?.seq).toBe(2)
    for (const id of [d, e])
      expect(last.find((m) => m.conversationId === id)).toMatchObject({ seq: 1, senderType: 'SYSTEM', senderId: null })
    expect(await findLastVisibleMessages(db, reader(), [])).toEqual([])
  })

  it('reads the same inside a transaction (through Prisma, not the pool)', async () => {
    const { db } = testApp()
    const pooled = byConversation(await findLastVisibleMessages(db, reader(), ids))
    expect(byConversation(await db.$transaction((tx) => findLastVisibleMessages(tx, reader(), ids)))).toEqual(pooled)
  })
})
