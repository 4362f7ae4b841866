import pg from 'pg'
import { describe, expect, it } from 'vitest'
import { inject } from 'vitest'
import { graphql } from './gql/index.ts'
import { newUser, newUsers, uniqueHandle, userWithHandle } from './support/harness.ts'
import { createGroup, lastSeqOf, SendMessage, sendText } from './support/operations.ts'

const UpsertUsers = graphql(`
  mutation UpsertUsers($users: [UserInput!]!) {
    upsertUsers(users: $users) { id handle displayName kind }
  }
`)

describe('sendMessage', () => {
  it('gives 100 concurrent sends into one conversation the seqs 1..100 exactly', async () => {
    const [owner, ...members] = await newUsers(5)
    const group = await createGroup(owner!, members)
    const start = group.lastSeq // the CONVERSATION_CREATED system message
    const senders = [owner!, ...members]
    const results = await Promise.all(Array.from({ length: 100 }, (_, i) => sendText(senders[i % senders.length]!, group.id, `m${i}`)))
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
      await new Promise((r) => setTimeout(r, 200))
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
    const input = { conversationId: group.id, clientMessageId: `retry-${Date.now()}`, content: { text: { text: 'once' } } }
    const results = await Promise.all(Array.from({ length: 30 }, () => alice!.run(SendMessage, { input })))
    const ids = new Set(results.map((r) => r.sendMessage.message.id))
    expect(ids.size).toBe(1)
    expect(results.filter((r) => !r.sendMessage.deduplicated)).toHaveLength(1)
    expect(await lastSeqOf(alice!, group.id)).toBe(group.lastSeq + 1)
    // A later retry, even with different content, returns the original.
    const late = await alice!.run(SendMessage, { input: { ...input, content: { text: { text: 'changed' } } } })
    expect(late.sendMessage).toMatchObject({ deduplicated: true, message: { id: [...ids][0], content: { text: 'once' } } })
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
