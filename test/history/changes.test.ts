import { describe, expect, it } from 'vitest'
import { codes, newUsers, type TestUser } from '../support/harness.ts'
import { Changes, EditMessage, RecallMessage } from '../support/lifecycle.ts'
import { AddMembers, ConversationState, createGroup, SendMessage, sendText } from '../support/operations.ts'
import { seededRandom } from '../support/random.ts'

type Batch = {
  lastPts: number
  hasMore: boolean
  messages: { seq: number; pts: number; status: string; content: { text?: string } | null }[]
}

async function changes(user: TestUser, conversationId: string, sincePts: number, first?: number): Promise<Batch> {
  return (await user.run(Changes, { id: conversationId, sincePts, first })).conversation!.changes
}

/** Pages through the whole feed after sincePts; checks each batch's order and bounds on the way. */
async function drain(user: TestUser, conversationId: string, sincePts: number, first: number) {
  const seen: Batch['messages'] = []
  for (let since = sincePts; ;) {
    const batch = await changes(user, conversationId, since, first)
    expect(batch.messages.length).toBeLessThanOrEqual(first)
    const pts = batch.messages.map((m) => m.pts)
    expect(pts).toEqual([...pts].sort((a, b) => a - b))
    expect(pts.every((p) => p > since && p <= batch.lastPts)).toBe(true)
    seen.push(...batch.messages)
    since = batch.lastPts
    if (!batch.hasMore) return { seen, lastPts: since }
  }
}

describe('Conversation.changes', () => {
  it('returns each message changed after sincePts once, in its latest state, ascending by pts', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    const a = (await sendText(alice!, group.id, 'a')).message
    const b = (await sendText(bob!, group.id, 'b')).message
    const c = (await sendText(alice!, group.id, 'c')).message
    await alice!.run(EditMessage, { messageId: a.id, text: 'a2' })
    const recalled = (await bob!.run(RecallMessage, { messageId: b.id })).recallMessage

    const batch = await changes(bob!, group.id, c.pts - 1)
    expect(batch).toEqual({
      lastPts: recalled.pts,
      hasMore: false,
      messages: [
        { seq: c.seq, pts: c.pts, status: 'NORMAL', content: { text: 'c' } },
        { seq: a.seq, pts: c.pts + 1, status: 'EDITED', content: { text: 'a2' } },
        { seq: b.seq, pts: recalled.pts, status: 'RECALLED', content: null },
      ],
    })
    // Paged: lastPts is the last pts returned while there is more.
    const first = await changes(bob!, group.id, c.pts - 1, 2)
    expect(first).toMatchObject({ hasMore: true, lastPts: c.pts + 1 })
    expect(await changes(bob!, group.id, first.lastPts, 2)).toEqual({ ...batch, messages: batch.messages.slice(2) })
    expect(await changes(bob!, group.id, recalled.pts)).toEqual({ lastPts: recalled.pts, hasMore: false, messages: [] })
  })

  it('skips what the viewer may not see, and moves lastPts past it so it is never scanned again', async () => {
    const [alice, bob, carol, late] = await newUsers(4)
    const group = await createGroup(alice!, [bob!, carol!], 'JOINED')
    const before = (await sendText(alice!, group.id, 'before late joined')).message
    await alice!.run(AddMembers, { conversationId: group.id, userIds: [late!.id] })
    await alice!.run(EditMessage, { messageId: before.id, text: 'edited after' }) // still before late's window
    const directed = {
      conversationId: group.id,
      clientMessageId: 'to-carol',
      content: { text: { text: 'psst' } },
      visibleToUserIds: [carol!.id],
    }
    const hidden = (await alice!.run(SendMessage, { input: directed })).sendMessage.message

    const forLate = await changes(late!, group.id, 0)
    expect(forLate.messages.map((m) => m.seq)).toEqual([before.seq + 1]) // only the MEMBERS_ADDED system message
    expect(forLate).toMatchObject({ lastPts: hidden.pts, hasMore: false })
    const forBob = await changes(bob!, group.id, hidden.pts - 1)
    expect(forBob).toEqual({ lastPts: hidden.pts, hasMore: false, messages: [] })
    expect((await changes(carol!, group.id, hidden.pts - 1)).messages.map((m) => m.seq)).toEqual([hidden.seq])
  })

  it('checks its arguments and access', async () => {
    const [alice, bob, outsider] = await newUsers(3)
    const group = await createGroup(alice!, [bob!])
    const bad = (sincePts: number, first?: number) => alice!.try(Changes, { id: group.id, sincePts, first })
    expect(codes(await bad(0, 101))).toEqual(['BAD_USER_INPUT'])
    expect(codes(await bad(0, 0))).toEqual(['BAD_USER_INPUT'])
    expect(codes(await bad(-1))).toEqual(['BAD_USER_INPUT'])
    expect((await changes(alice!, group.id, 0, 100)).messages).toHaveLength(1)
    expect(codes(await outsider!.try(Changes, { id: group.id, sincePts: 0 }))).toEqual(['NOT_FOUND'])
  })

  it('matches a brute-force model over a long random mix of sends, edits and recalls, while a client syncs with small pages', async () => {
    const seed = Date.now()
    const rand = seededRandom(seed).next
    const pick = <T>(items: readonly T[]) => items[Math.floor(rand() * items.length)]
    const [alice, bob, carol] = await newUsers(3)
    const group = await createGroup(alice!, [bob!, carol!])
    const reader = bob!

    // The model: every message's latest state (the response with the highest pts wins) and who sent it.
    type State = { pts: number; status: string; text: string | null; sender: TestUser; id: string; visible: boolean }
    const model = new Map<number, State>()
    const apply = (
      m: { seq: number; pts: number; status: string; id: string; content: unknown },
      sender: TestUser,
      visible: boolean,
    ) => {
      const known = model.get(m.seq)
      if (known && known.pts >= m.pts) return
      const text = (m.content as { text?: string } | null)?.text ?? null
      model.set(m.seq, { pts: m.pts, status: m.status, text, sender, id: m.id, visible: known?.visible ?? visible })
    }

    let op = 0
    async function writer(user: TestUser, steps: number) {
      for (let i = 0; i < steps; i++) {
        const roll = rand()
        const mine = [...model.entries()].filter(([, s]) => s.sender === user && s.status !== 'RECALLED')
        const target = pick(user === alice ? [...model.entries()].filter(([, s]) => s.status !== 'RECALLED') : mine)
        if (roll < 0.45 || !target) {
          // Only alice directs messages, so she (who recalls anyone's) can see every message.
          const directed = user === alice && rand() < 0.3 ? [pick([bob!.id, carol!.id])!] : []
          const input = {
            conversationId: group.id,
            clientMessageId: `op-${seed}-${++op}`,
            content: { text: { text: `t${op}` } },
            visibleToUserIds: directed,
          }
          const sent = (await user.run(SendMessage, { input })).sendMessage.message
          apply(sent, user, !directed.length || directed.includes(reader.id) || user === reader)
        } else if (roll < 0.8 && target[1].sender === user) {
          const response = await user.try(EditMessage, { messageId: target[1].id, text: `e${++op}` })
          if (response.errors) expect(codes(response)).toEqual(['MESSAGE_RECALLED'])
          else apply(response.data!.editMessage, user, true)
        } else {
          apply((await user.run(RecallMessage, { messageId: target[1].id })).recallMessage, target[1].sender, true)
        }
      }
    }

    // A client syncing with small pages while the writers run.
    const local = new Map<number, { pts: number; status: string; text: string | null }>()
    const delivered = new Set<string>()
    let sincePts = 0
    let writing = true
    const sync = async () => {
      const batch = await changes(reader, group.id, sincePts, 1 + Math.floor(rand() * 6))
      for (const m of batch.messages) {
        expect(delivered.has(`${m.seq}@${m.pts}`), `seed ${seed}: a change delivered twice`).toBe(false)
        delivered.add(`${m.seq}@${m.pts}`)
        expect(m.pts).toBeGreaterThan(local.get(m.seq)?.pts ?? 0)
        local.set(m.seq, { pts: m.pts, status: m.status, text: m.content?.text ?? null })
      }
      expect(batch.lastPts).toBeGreaterThanOrEqual(sincePts)
      sincePts = batch.lastPts
      return batch.hasMore
    }
    const client = (async () => {
      while (writing) await sync()
    })()
    await Promise.all([writer(alice!, 90), writer(bob!, 80), writer(carol!, 80)]).finally(() => (writing = false))
    await client
    while (await sync());

    const { lastPts } = (await reader.run(ConversationState, { id: group.id })).conversation!
    const systemCreated = 1
    const expected = new Map(
      [...model].filter(([, s]) => s.visible).map(([seq, s]) => [seq, { pts: s.pts, status: s.status, text: s.text }]),
    )
    local.delete(systemCreated)
    expect(sincePts, `seed ${seed}`).toBe(lastPts)
    expect(Math.max(...[...model.values()].map((s) => s.pts))).toBe(lastPts)
    expect(new Map([...local].sort(([a], [b]) => a - b)), `seed ${seed}`).toEqual(
      new Map([...expected].sort(([a], [b]) => a - b)),
    )

    // A fresh client from 0, and one resuming from a checkpoint, page through exactly the model.
    const full = await drain(reader, group.id, 0, 7)
    expect(full.lastPts).toBe(sincePts)
    const ordered = [...expected].sort(([, x], [, y]) => x.pts - y.pts)
    expect(full.seen.filter((m) => m.seq !== systemCreated).map((m) => [m.seq, m.pts])).toEqual(
      ordered.map(([seq, s]) => [seq, s.pts]),
    )
    const checkpoint = ordered[Math.floor(ordered.length / 2)]![1].pts
    const resumed = await drain(reader, group.id, checkpoint, 3)
    expect(resumed.seen.map((m) => m.seq)).toEqual(ordered.filter(([, s]) => s.pts > checkpoint).map(([seq]) => seq))
  })
})
