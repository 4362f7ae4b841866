import { describe, expect, it } from 'vitest'
import type { Db } from '../../src/db/client.ts'
import { advanceReadPosition } from '../../src/store/reads.ts'
import { codes, newUsers, testApp } from '../support/harness.ts'
import { SetFavorite, conversationKey, userKey } from '../support/lifecycle.ts'
import { createGroup, RemoveMember, sendText } from '../support/operations.ts'
import { Device, Sync, SyncToken, freshViewOf } from '../support/sync.ts'

const tokenOf = async (user: Awaited<ReturnType<typeof newUsers>>[number]) =>
  (await user.run(SyncToken)).viewer.syncToken
const encode = (body: unknown) => Buffer.from(JSON.stringify(body)).toString('base64url')
const decode = (token: string) => JSON.parse(Buffer.from(token, 'base64url').toString('utf8'))

/**
 * A writer whose transaction holds its id (allocated first) and commits last: markConversationRead's
 * store write, paused once its id is taken; `commit()` lets it write and waits for its commit.
 */
async function pausedReadPosition(
  db: Db,
  conversationId: string,
  userId: string,
  seq: number,
): Promise<{ commit(): Promise<void> }> {
  let release!: () => void
  const gate = new Promise<void>((resolve) => (release = resolve))
  let began!: () => void
  const begun = new Promise<void>((resolve) => (began = resolve))
  const written = db.$transaction(async (tx) => {
    await tx.$queryRaw`SELECT pg_current_xact_id()::text`
    began()
    await gate
    await advanceReadPosition(tx, conversationKey(conversationId), userKey(userId), seq)
  })
  await begun
  return {
    commit: async () => {
      release()
      await written
    },
  }
}

describe('Query.sync', () => {
  it('returns the same token when nothing changed, and the changes after it in batches of `first`', async () => {
    const [viewer, other] = await newUsers(2)
    const groups = [
      await createGroup(other!, [viewer!]),
      await createGroup(other!, [viewer!]),
      await createGroup(other!, [viewer!]),
    ]
    const device = new Device(viewer!)
    await device.load()
    const token = device.token
    expect((await viewer!.run(Sync, { since: token })).sync).toEqual({
      token,
      hasMore: false,
      conversations: [],
      removedConversationIds: [],
      messageStates: [],
    })

    const sent = []
    for (const g of groups) sent.push(await sendText(other!, g.id, 'for the batches'))
    await viewer!.run(SetFavorite, { messageId: sent[0]!.message.id, favorite: true })
    const batches = await device.sync(1)
    expect(batches.map((b) => b.hasMore)).toEqual([true, true, true, false])
    expect(
      batches.map((b) => [...b.conversations.map((c) => c.id), ...b.messageStates.map((s) => s.messageId)]),
    ).toEqual([[groups[0]!.id], [groups[1]!.id], [groups[2]!.id], [sent[0]!.message.id]])
    expect(batches[0]!.conversations[0]!.lastPts).toBe(sent[0]!.message.pts)
    expect(device.view()).toEqual(await freshViewOf(viewer!))
    // Everything delivered: the final token syncs nothing, and answers itself.
    expect((await viewer!.run(Sync, { since: device.token })).sync.token).toBe(device.token)
  })

  it('lists a conversation once per batch however often it changed', async () => {
    const [viewer, other] = await newUsers(2)
    const group = await createGroup(other!, [viewer!])
    const since = await tokenOf(viewer!)
    for (let i = 0; i < 5; i++) await sendText(other!, group.id, `change ${i}`)
    const { sync } = await viewer!.run(Sync, { since })
    expect(sync.conversations.map((c) => c.id)).toEqual([group.id])
    expect(sync.hasMore).toBe(false)
  })

  it('refuses malformed and foreign tokens and out-of-range batches with BAD_USER_INPUT, a token from a later database state with RESYNC_REQUIRED', async () => {
    const [viewer, other] = await newUsers(2)
    const mine = await tokenOf(viewer!)
    const theirs = await tokenOf(other!)
    const { u, s } = decode(mine)
    for (const since of [
      '',
      'not a token',
      encode({ v: 1, u, s: 'x:y:' }),
      encode({ v: 2, u, s }),
      encode({ v: 1, u, s: '20:10:' }),
      theirs,
    ]) {
      expect(codes(await viewer!.try(Sync, { since }))).toEqual(['BAD_USER_INPUT'])
    }
    expect((await viewer!.try(Sync, { since: theirs })).errors![0]!.message).toBe('since belongs to another user')
    for (const first of [0, 501])
      expect(codes(await viewer!.try(Sync, { since: mine, first }))).toEqual(['BAD_USER_INPUT'])
    const ahead = encode({ v: 1, u, s: '9000000000000000:9000000000000001:' })
    expect(codes(await viewer!.try(Sync, { since: ahead }))).toEqual(['RESYNC_REQUIRED'])
  })

  it('reports a removal and nothing of the conversation written after it', async () => {
    const [viewer, owner] = await newUsers(2)
    const group = await createGroup(owner!, [viewer!])
    const since = await tokenOf(viewer!)
    await owner!.run(RemoveMember, { conversationId: group.id, userId: viewer!.id })
    await sendText(owner!, group.id, 'after the removal')
    const { sync } = await viewer!.run(Sync, { since })
    expect(sync).toMatchObject({ conversations: [], removedConversationIds: [group.id], hasMore: false })
    await sendText(owner!, group.id, 'later still')
    expect((await viewer!.run(Sync, { since: sync.token })).sync).toMatchObject({
      token: sync.token,
      conversations: [],
      removedConversationIds: [],
    })
  })

  it('delivers a change that took its transaction id before the token but committed after it', async () => {
    const { db } = testApp()
    const [viewer, other] = await newUsers(2)
    const [slow, fast] = [await createGroup(other!, [viewer!]), await createGroup(other!, [viewer!])]
    const seq = (await sendText(other!, slow.id, 'to read')).message.seq
    const slowWrite = await pausedReadPosition(db, slow.id, viewer!.id, seq)
    await sendText(other!, fast.id, 'commits first')
    const token = await tokenOf(viewer!)
    await slowWrite.commit()
    const { sync } = await viewer!.run(Sync, { since: token })
    // The fast send committed before the token: not repeated. With a plain sequence the token would
    // sit past the slow write's number and never return it.
    expect(sync.conversations.map((c) => [c.id, c.viewerMember.lastReadSeq])).toEqual([[slow.id, seq]])
  })

  it('delivers once a change that commits between two batches with a transaction id older than the first batch’s', async () => {
    const { db } = testApp()
    const [viewer, other] = await newUsers(2)
    const slow = await createGroup(other!, [viewer!])
    const fast = [
      await createGroup(other!, [viewer!]),
      await createGroup(other!, [viewer!]),
      await createGroup(other!, [viewer!]),
    ]
    const seq = (await sendText(other!, slow.id, 'to read')).message.seq
    const device = new Device(viewer!)
    await device.load()
    const slowWrite = await pausedReadPosition(db, slow.id, viewer!.id, seq)
    for (const g of fast) await sendText(other!, g.id, 'commits first')
    // The first batch's snapshot sees the three sends, not the slow write; then it commits, sorting
    // before the batch's last change. A batch that delivers it must not move the position back (a
    // later batch would repeat the sends), and none may skip it.
    const first = (await viewer!.run(Sync, { since: device.token, first: 1 })).sync
    await device.apply(first)
    await slowWrite.commit()
    const batches = [first, ...(await device.sync(1))]
    expect(batches.map((b) => b.conversations.map((c) => c.id))).toEqual([
      [fast[0]!.id],
      [fast[1]!.id],
      [fast[2]!.id],
      [slow.id],
    ])
    expect(batches.map((b) => b.hasMore)).toEqual([true, true, true, false])
    expect(device.view()).toEqual(await freshViewOf(viewer!))
  })
})
