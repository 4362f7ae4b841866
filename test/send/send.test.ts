import pg from 'pg'
import { describe, expect, it } from 'vitest'
import { inject } from 'vitest'
import { codes, newUser, newUsers, sqlLog, uniqueHandle, userWithHandle, type TestUser } from '../support/harness.ts'
import { createGroup, lastSeqOf, MuteMember, SendMessage, sendText, UpsertUsers } from '../support/operations.ts'

describe('sendMessage', () => {
  it('gives 100 concurrent sends into one conversation the seqs 1..100 exactly', async () => {
    const [owner, ...members] = await newUsers(5)
    const group = await createGroup(owner!, members)
    const start = group.lastSeq // the CONVERSATION_CREATED system message
    const senders = [owner!, ...members]
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, i) => sendText(senders[i % senders.length]!, group.id, `m${i}`)),
    )
    const seqs = results.map((r) => r.message.seq).sort((a, b) => a - b)
    expect(seqs).toEqual(Array.from({ length: 100 }, (_, i) => start + i + 1))
    expect(new Set(results.map((r) => r.message.pts)).size).toBe(100)
    expect(results.every((r) => !r.deduplicated)).toBe(true)
    expect(await lastSeqOf(owner!, group.id)).toBe(start + 100)
  })

  it('does not make a send to one conversation wait for a lock held on another', async () => {
    const [alice, bob] = await newUsers(2)
    const busy = await createGroup(alice!, [bob!])
    const free = await createGroup(alice!, [bob!])
    const locker = new pg.Client({ connectionString: inject('databaseUrl') })
    await locker.connect()
    try {
      await locker.query('BEGIN')
      const busyId = Number(Buffer.from(busy.id, 'base64url').toString().split(':')[1])
      await locker.query('SELECT 1 FROM conversations WHERE id = $1 FOR UPDATE', [busyId])
      let blockedDone = false
      const blocked = sendText(alice!, busy.id, 'waits').then((r) => ((blockedDone = true), r))
      // The free conversation is not held up by the lock on the busy one.
      const sent = await sendText(bob!, free.id, 'goes through')
      expect(sent.message.seq).toBe(free.lastSeq + 1)
      // The other send is queued behind the lock: its backend waits on the locker's.
      const lockerPid = (await locker.query('SELECT pg_backend_pid() AS pid')).rows[0].pid
      const waitsOnLocker = `SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))) AS waiting`
      while (!(await locker.query(waitsOnLocker, [lockerPid])).rows[0].waiting);
      expect(blockedDone).toBe(false)
      await locker.query('COMMIT')
      expect((await blocked).message.seq).toBe(busy.lastSeq + 1)
    } finally {
      await locker.end()
    }
  })

  it('stores one row for 30 concurrent retries of one clientMessageId and answers all with it', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    const input = {
      conversationId: group.id,
      clientMessageId: `retry-${Date.now()}`,
      content: { text: { text: 'once' } },
    }
    const results = await Promise.all(Array.from({ length: 30 }, () => alice!.run(SendMessage, { input })))
    const ids = new Set(results.map((r) => r.sendMessage.message.id))
    expect(ids.size).toBe(1)
    expect(results.filter((r) => !r.sendMessage.deduplicated)).toHaveLength(1)
    expect(await lastSeqOf(alice!, group.id)).toBe(group.lastSeq + 1)
    // A later retry, even with different content, returns the original.
    const late = await alice!.run(SendMessage, { input: { ...input, content: { text: { text: 'changed' } } } })
    expect(late.sendMessage).toMatchObject({
      deduplicated: true,
      message: { id: [...ids][0], content: { text: 'once' } },
    })
  })

  it('keys idempotency per sender: two senders may use the same clientMessageId', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    const a = await sendText(alice!, group.id, 'a', 'same-key')
    const b = await sendText(bob!, group.id, 'b', 'same-key')
    expect(a.deduplicated || b.deduplicated).toBe(false)
    expect(b.message.seq).toBe(a.message.seq + 1)
  })

  it('records an agent user as senderType AGENT', async () => {
    const operator = await newUser({ operator: true })
    const handle = uniqueHandle('agent')
    await operator.run(UpsertUsers, { users: [{ handle, displayName: 'Agent', kind: 'AGENT' }] })
    const agent = await userWithHandle(handle)
    const human = await newUser()
    const group = await createGroup(human, [agent])
    const sent = await sendText(agent, group.id, 'beep')
    expect(sent.message).toMatchObject({ senderType: 'AGENT', sender: { id: agent.id } })
    expect((await sendText(human, group.id, 'hi')).message.senderType).toBe('USER')
  })
})

describe('concurrent sends to one conversation (coalesced into shared transactions)', () => {
  it('give each sender its own message, seq order, idempotency and error', async () => {
    const [owner, muted, ...members] = await newUsers(6)
    const outsider = await newUser()
    const group = await createGroup(owner!, [muted!, ...members])
    await owner!.run(MuteMember, {
      conversationId: group.id,
      userId: muted!.id,
      until: new Date(Date.now() + 3_600_000).toISOString(),
    })
    const start = await lastSeqOf(owner!, group.id)
    const commitsBefore = sqlLog.filter((q) => /^COMMIT/i.test(q.trim())).length

    const attempt = (user: TestUser, clientMessageId: string) =>
      user.try(SendMessage, {
        input: {
          conversationId: group.id,
          clientMessageId,
          content: { text: { text: `${user.handle} ${clientMessageId}` } },
        },
      })
    const plan = [
      ...members.flatMap((m) => Array.from({ length: 8 }, (_, i) => [m, `k${i}`] as const)),
      ...members.map((m) => [m, 'k0'] as const), // a retry of each member's first message, inside the burst
      ...Array.from({ length: 4 }, (_, i) => [muted!, `muted${i}`] as const),
      ...Array.from({ length: 4 }, (_, i) => [outsider, `out${i}`] as const),
    ]
    const responses = await Promise.all(plan.map(([user, key]) => attempt(user, key)))

    const byKey = new Map<string, { ids: Set<string>; fresh: number }>()
    responses.forEach((response, i) => {
      const [user, key] = plan[i]!
      if (user === muted) return expect(codes(response)).toEqual(['SENDER_MUTED'])
      if (user === outsider) return expect(codes(response)).toEqual(['NOT_FOUND'])
      const payload = response.data!.sendMessage
      expect(payload.message.content).toEqual({ __typename: 'TextContent', text: `${user.handle} ${key}` })
      expect(payload.message.sender!.id).toBe(user.id)
      const entry = byKey.get(`${user.id}/${key}`) ?? { ids: new Set(), fresh: 0 }
      entry.ids.add(payload.message.id)
      entry.fresh += payload.deduplicated ? 0 : 1
      byKey.set(`${user.id}/${key}`, entry)
    })
    expect(byKey.size).toBe(members.length * 8)
    for (const entry of byKey.values()) expect(entry).toMatchObject({ ids: expect.any(Set), fresh: 1 })
    expect([...byKey.values()].every((e) => e.ids.size === 1)).toBe(true)
    const seqs = responses
      .flatMap((r) => (r.data?.sendMessage.deduplicated === false ? [r.data.sendMessage.message.seq] : []))
      .sort((a, b) => a - b)
    expect(seqs).toEqual(Array.from({ length: members.length * 8 }, (_, i) => start + 1 + i))
    expect(await lastSeqOf(owner!, group.id)).toBe(start + members.length * 8)
    // Fewer commits than messages: concurrent sends shared transactions.
    const commits = sqlLog.filter((q) => /^COMMIT/i.test(q.trim())).length - commitsBefore
    expect(commits).toBeLessThan(members.length * 8)
  })
})
