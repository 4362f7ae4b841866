import pg from 'pg'
import { describe, expect, inject, it } from 'vitest'
import { codes, newUser, newUsers, sqlLog, type TestUser } from '../support/harness.ts'
import { createGroup, lastSeqOf, MuteMember, ReadStored, SendMessage, SendStored } from '../support/operations.ts'
import { seededRandom } from '../support/random.ts'

/** Sends coalesced across conversations (src/domain/send/queue.ts, decision 0140), raced through the API. */

const send = (
  user: TestUser,
  conversationId: string,
  clientMessageId: string,
  text: string,
  mentionUserIds?: string[],
) => user.try(SendMessage, { input: { conversationId, clientMessageId, content: { text: { text } }, mentionUserIds } })
type Response = Awaited<ReturnType<typeof send>>

const commitsIn = async <T>(work: () => Promise<T>): Promise<{ result: T; commits: number }> => {
  const before = sqlLog.filter((q) => /^COMMIT/i.test(q.trim())).length
  const result = await work()
  return { result, commits: sqlLog.filter((q) => /^COMMIT/i.test(q.trim())).length - before }
}

const rawId = (globalId: string) => Number(Buffer.from(globalId, 'base64url').toString().split(':')[1])

/** The fresh seqs of each conversation, from the responses that were not deduplicated. */
function freshSeqs(plan: readonly { conversationId: string }[], responses: readonly Response[]): Map<string, number[]> {
  const seqs = new Map<string, number[]>()
  responses.forEach((r, i) => {
    if (r.data?.sendMessage.deduplicated !== false) return
    const id = plan[i]!.conversationId
    seqs.set(
      id,
      [...(seqs.get(id) ?? []), r.data.sendMessage.message.seq].sort((a, b) => a - b),
    )
  })
  return seqs
}

const range = (from: number, count: number) => Array.from({ length: count }, (_, i) => from + i)

describe('sends coalesced across conversations', () => {
  it('share transactions across conversations: 40 concurrent sends to 40 conversations take fewer than 40 commits', async () => {
    const [owner, member] = await newUsers(2)
    const groups = await Promise.all(Array.from({ length: 40 }, () => createGroup(owner!, [member!])))
    const plan = groups.map((g, i) => ({ user: i % 2 ? owner! : member!, conversationId: g.id }))
    const { result: responses, commits } = await commitsIn(() =>
      Promise.all(plan.map((p, i) => send(p.user, p.conversationId, `x${i}`, `to ${i}`))),
    )
    responses.forEach((r, i) => expect(r.data?.sendMessage.message.seq).toBe(groups[i]!.lastSeq + 1))
    expect(commits).toBeLessThan(40)
  })

  // Model-based: each seed races a burst of sends over several conversations, mixing fresh sends,
  // retries of one key (also under the same key in other conversations), a member muted in some of
  // the conversations, a user who is a member of only some, an outsider, and sends whose check fails
  // inside the shared transaction (a mention of a non-member). The model predicts every response.
  for (const seed of [1, 2, 3]) {
    it(`give every send its own outcome, seq and idempotency in a mixed burst (seed ${seed})`, async () => {
      const random = seededRandom(seed)
      const [owner, a, b, c, muted, partial] = await newUsers(6)
      const outsider = await newUser()
      const groups = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          createGroup(owner!, i < 3 ? [a!, b!, c!, muted!] : [a!, b!, c!, muted!, partial!]),
        ),
      )
      const until = new Date(Date.now() + 3_600_000).toISOString()
      for (const g of groups.slice(0, 2))
        await owner!.run(MuteMember, { conversationId: g.id, userId: muted!.id, until })
      const start = new Map(await Promise.all(groups.map(async (g) => [g.id, await lastSeqOf(owner!, g.id)] as const)))

      const senders = [a!, b!, c!, muted!, partial!, outsider]
      const plan = Array.from({ length: 150 }, (_, i) => {
        const group = random.pick(groups)!
        const user = random.pick(senders)!
        const badMention = random.chance(0.1)
        // Retries share a small pool of keys per sender; a bad send's key is its own.
        const key = badMention ? `bad-${i}` : `k${random.int(6)}`
        return { user, conversationId: group.id, index: groups.indexOf(group), key, badMention }
      })
      const expected = (p: (typeof plan)[number]) => {
        const member = p.user !== outsider && (p.user !== partial || p.index >= 3)
        if (!member) return 'NOT_FOUND'
        if (p.user === muted && p.index < 2) return 'SENDER_MUTED'
        return p.badMention ? 'BAD_USER_INPUT' : 'OK'
      }
      const text = (p: (typeof plan)[number]) => `${p.user.handle}/${p.index}/${p.key}`
      const responses = await Promise.all(
        plan.map((p) => send(p.user, p.conversationId, p.key, text(p), p.badMention ? [outsider.id] : undefined)),
      )

      const byKey = new Map<string, { id: string; seq: number; content: unknown }[]>()
      const fresh = new Map<string, number>()
      responses.forEach((response, i) => {
        const p = plan[i]!
        const outcome = expected(p)
        if (outcome !== 'OK') return expect(codes(response)).toEqual([outcome])
        const { deduplicated, message } = response.data!.sendMessage
        expect(message.content).toEqual({ __typename: 'TextContent', text: text(p) })
        const k = `${p.user.id}/${p.conversationId}/${p.key}`
        byKey.set(k, [...(byKey.get(k) ?? []), { id: message.id, seq: message.seq, content: message.content }])
        if (!deduplicated) fresh.set(k, (fresh.get(k) ?? 0) + 1)
      })
      // One message per (sender, conversation, key), and every retry answered with exactly it.
      for (const [k, answers] of byKey) {
        expect(fresh.get(k)).toBe(1)
        for (const answer of answers) expect(answer).toEqual(answers[0])
      }
      // Per conversation: the stored messages are the accepted keys, at strictly consecutive seqs.
      const seqs = freshSeqs(plan, responses)
      for (const g of groups) {
        const keys = [...byKey.keys()].filter((k) => k.split('/')[1] === g.id).length
        expect(seqs.get(g.id) ?? []).toEqual(range(start.get(g.id)! + 1, keys))
        expect(await lastSeqOf(owner!, g.id)).toBe(start.get(g.id)! + keys)
      }
    })
  }

  it('hold up only the sends to a conversation whose row another transaction holds', async () => {
    const [owner, member] = await newUsers(2)
    const [busy, ...free] = await Promise.all(Array.from({ length: 4 }, () => createGroup(owner!, [member!])))
    const locker = new pg.Client({ connectionString: inject('databaseUrl') })
    await locker.connect()
    try {
      await locker.query('BEGIN')
      await locker.query('SELECT 1 FROM conversations WHERE id = $1 FOR UPDATE', [rawId(busy!.id)])
      let busyDone = false
      const blocked = Promise.all(
        Array.from({ length: 6 }, (_, i) => send(i % 2 ? owner! : member!, busy!.id, `busy${i}`, 'waits')),
      ).then((r) => ((busyDone = true), r))
      // In the same burst, the free conversations' sends commit while the busy one's wait.
      const sent = await Promise.all(
        free.flatMap((g) =>
          Array.from({ length: 4 }, (_, i) => send(i % 2 ? owner! : member!, g.id, `free${i}`, 'goes through')),
        ),
      )
      const seqs = freshSeqs(
        free.flatMap((g) => Array.from({ length: 4 }, () => ({ conversationId: g.id }))),
        sent,
      )
      for (const g of free) expect(seqs.get(g.id)).toEqual(range(g.lastSeq + 1, 4))
      const lockerPid = (await locker.query('SELECT pg_backend_pid() AS pid')).rows[0].pid
      const waitsOnLocker = `SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))) AS waiting`
      while (!(await locker.query(waitsOnLocker, [lockerPid])).rows[0].waiting);
      expect(busyDone).toBe(false)
      await locker.query('COMMIT')
      const waited = await blocked
      expect(waited.map((r) => r.data!.sendMessage.message.seq).sort((x, y) => x - y)).toEqual(
        range(busy!.lastSeq + 1, 6),
      )
    } finally {
      await locker.end()
    }
  })

  it('fail only the send whose statement breaks the shared transaction; the others commit, consecutively', async () => {
    const [owner, member] = await newUsers(2)
    const groups = await Promise.all(Array.from({ length: 3 }, () => createGroup(owner!, [member!])))
    const poison = `poison-${Date.now()}-${Math.random()}`
    const admin = new pg.Client({ connectionString: inject('databaseUrl') })
    await admin.connect()
    // A failure the checks cannot foresee: the database refuses this one row.
    const trigger = `refuse_${poison.replace(/\W/g, '_')}`
    await admin.query(`CREATE FUNCTION ${trigger}() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.content->>'text' = '${poison}' THEN RAISE EXCEPTION 'refused'; END IF; RETURN NEW; END $$`)
    await admin.query(`CREATE TRIGGER ${trigger} BEFORE INSERT ON messages FOR EACH ROW EXECUTE FUNCTION ${trigger}()`)
    try {
      const plan = groups.flatMap((g, gi) =>
        Array.from({ length: 8 }, (_, i) => ({
          user: i % 2 ? owner! : member!,
          conversationId: g.id,
          text: gi === 1 && i === 3 ? poison : `ok ${i}`,
        })),
      )
      const responses = await Promise.all(plan.map((p, i) => send(p.user, p.conversationId, `p${i}`, p.text)))
      responses.forEach((r, i) => {
        if (plan[i]!.text === poison) expect(codes(r)).toEqual(['INTERNAL_SERVER_ERROR'])
        else expect(r.errors).toBeUndefined()
      })
      const seqs = freshSeqs(plan, responses)
      for (const [gi, g] of groups.entries()) {
        const accepted = gi === 1 ? 7 : 8
        expect(seqs.get(g.id)).toEqual(range(g.lastSeq + 1, accepted))
        expect(await lastSeqOf(owner!, g.id)).toBe(g.lastSeq + accepted)
      }
    } finally {
      await admin.query(`DROP TRIGGER ${trigger} ON messages`)
      await admin.query(`DROP FUNCTION ${trigger}()`)
      await admin.end()
    }
  })
})

describe('a coalesced send answers with the message as stored', () => {
  it('for keys, texts and JSON that need quoting in an array literal, across conversations in one burst', async () => {
    const [owner, member] = await newUsers(2)
    const groups = await Promise.all(Array.from({ length: 4 }, () => createGroup(owner!, [member!])))
    const awkward = ['a"b', 'back\\slash', '{braces},commas', 'NULL', ' spaced ', '引号"和\\', '']
    const contents = [
      ...awkward.filter(Boolean).map((text) => ({ text: { text } })),
      // jsonb keeps its own key order (shorter keys first): the answer must not keep the input's.
      { card: { cardType: 'order', data: { zebra: 1, b: [{ yy: 'x"y', a: null }], aa: { '\\': true } } } },
    ]
    const plan = contents.flatMap((content, i) =>
      groups.map((g, j) => ({
        user: (i + j) % 2 ? owner! : member!,
        input: {
          conversationId: g.id,
          clientMessageId: `${awkward[i % awkward.length]}-${i}-${j}`,
          content,
          mentionUserIds: j % 2 ? [owner!.id] : [],
        },
      })),
    )
    const { result: responses, commits } = await commitsIn(() =>
      Promise.all(plan.map((p) => p.user.run(SendStored, { input: p.input }))),
    )
    expect(commits).toBeLessThan(plan.length)
    for (const [i, response] of responses.entries()) {
      const sent = response.sendMessage.message
      expect(sent.clientMessageId).toBe(plan[i]!.input.clientMessageId)
      const stored = (await plan[i]!.user.run(ReadStored, { id: sent.id })).node
      // Key order included: the JSON texts compare, not only the values.
      expect(JSON.stringify(sent)).toBe(JSON.stringify(stored))
    }
  })
})
