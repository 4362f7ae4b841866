import { describe, expect, it } from 'vitest'
import { messageGlobalId, parseId } from '../../src/domain/core/ids.ts'
import { newUsers } from '../support/harness.ts'
import { RecallMessage } from '../support/lifecycle.ts'
import { AddMembers, createGroup, MarkRead, SendMessage } from '../support/operations.ts'
import { seededRandom } from '../support/random.ts'
import { ThreadModel, ThreadModelView, type ThreadModelMessage } from '../support/threadModel.ts'
import { FollowThread, MarkThreadRead } from '../support/threads.ts'

/**
 * Unread counts and thread summaries against a brute-force model: random top-level messages and
 * replies (alsoInConversation or not, mentions, directed), follows and unfollows, thread and
 * conversation reads, recalls and members joining a JOINED or SHARED group, then every member's
 * conversation counts, unreadTotal, history and each root's summary compared with a recount.
 */
async function runScenario(seed: number) {
  const rand = seededRandom(seed)
  const users = await newUsers(6)
  const owner = 0
  const joinedHistory = seed % 2 === 0
  const created = await createGroup(users[0]!, users.slice(1, 4), joinedHistory ? 'JOINED' : 'SHARED')
  const model = new ThreadModel(created.lastSeq, [0, 1, 2, 3])
  const conversationId = parseId(created.id, 'Conversation')
  const idOf = (m: ThreadModelMessage) => messageGlobalId({ conversationId, seq: m.seq })
  let sent = 0

  const send = async (asReply: boolean) => {
    const sender = rand.pick(model.current())!
    const others = model.current().filter((u) => u !== sender)
    const roots = model.messages.filter((m) => m.root === null && m.sender !== null && model.sees(sender, m))
    const root = asReply ? rand.pick(roots) : undefined
    if (asReply && !root) return
    const to = root && rand.chance(0.15) ? rand.subset(others, 0.4) : []
    const mentions = rand.chance(0.3) ? rand.subset(to.length ? to : others, 0.4) : []
    const inConversation = !root || rand.chance(0.3)
    // Replying to a reply answers its root.
    const named =
      root && rand.chance(0.2)
        ? (rand.pick(model.replies(root.seq).filter((m) => model.sees(sender, m))) ?? root)
        : root
    const { sendMessage } = await users[sender]!.run(SendMessage, {
      input: {
        conversationId: created.id,
        clientMessageId: `thread-model-${seed}-${++sent}`,
        content: { text: { text: `m${sent}` } },
        mentionUserIds: mentions.map((u) => users[u]!.id),
        visibleToUserIds: to.map((u) => users[u]!.id),
        threadRootId: named ? idOf(named) : null,
        alsoInConversation: root ? inConversation : false,
      },
    })
    const expected = model.send({ sender, mentions, to, root: root?.seq ?? null, inConversation })
    expect(sendMessage.message.seq).toBe(expected.seq)
  }
  const follow = async () => {
    const u = rand.pick(model.current())!
    const root = rand.pick(model.messages.filter((m) => m.root === null && m.sender !== null && model.sees(u, m)))
    if (!root) return
    const following = rand.chance(0.5)
    await users[u]!.run(FollowThread, { messageId: idOf(root), follow: following })
    model.follow(u, root.seq, following)
  }
  const readThread = async () => {
    const u = rand.pick(model.current())!
    const root = rand.pick(model.messages.filter((m) => m.root === null && m.sender !== null && model.sees(u, m)))
    if (!root) return
    const seq = rand.chance(0.4) ? undefined : rand.int(model.lastSeq + 2) + 1
    await users[u]!.run(MarkThreadRead, { messageId: idOf(root), seq })
    model.readThread(u, root.seq, seq)
  }
  const read = async () => {
    const u = rand.pick(model.current())!
    const seq = rand.chance(0.3) ? undefined : rand.int(model.lastSeq + 2)
    await users[u]!.run(MarkRead, { conversationId: created.id, seq })
    model.read(u, seq ?? model.lastSeq)
  }
  const recall = async () => {
    const target = rand.pick(model.messages.filter((m) => m.sender !== null && !m.recalled))
    if (!target) return
    const recaller = model.sees(owner, target) ? owner : target.sender!
    if (!model.sees(recaller, target)) return
    await users[recaller]!.run(RecallMessage, { messageId: idOf(target) })
    target.recalled = true
  }
  const join = async () => {
    const newcomer = rand.pick([4, 5].filter((u) => !model.members.get(u)?.current))
    if (newcomer === undefined) return
    const { addGroupMembers } = await users[owner]!.run(AddMembers, {
      conversationId: created.id,
      userIds: [users[newcomer]!.id],
    })
    expect(addGroupMembers.lastSeq).toBe(model.notice())
    model.members.set(newcomer, { current: true, pos: 0, visibleFrom: joinedHistory ? model.lastSeq : 1 })
  }
  const check = async () => {
    for (const u of model.current()) {
      const { viewer, conversation } = await users[u]!.run(ThreadModelView, { id: created.id })
      const counts = model.unread(u)
      expect({ unread: conversation!.unreadCount, mentioned: conversation!.mentionedUnreadCount }, `user ${u}`).toEqual(
        {
          unread: counts.unreadCount,
          mentioned: counts.mentionedUnreadCount,
        },
      )
      expect(viewer.unreadTotal).toBe(counts.unreadCount)
      const history = conversation!.messages.edges.map((e) => e.node)
      expect(history.map((m) => m.seq)).toEqual(
        model.messages.filter((m) => m.inConversation && model.sees(u, m)).map((m) => m.seq),
      )
      for (const m of history) {
        const root = model.at(m.seq)
        expect(m.thread, `user ${u} root ${m.seq}`).toEqual(root.root === null ? model.summary(u, m.seq) : null)
      }
    }
  }

  for (let step = 0; step < 60; step++) {
    const roll = rand.next()
    if (roll < 0.2) await send(false)
    else if (roll < 0.55) await send(true)
    else if (roll < 0.65) await follow()
    else if (roll < 0.77) await readThread()
    else if (roll < 0.87) await read()
    else if (roll < 0.94) await recall()
    else await join()
    if (step % 10 === 9) await check()
  }
  await check()
}

describe('thread unread counts against a model', () => {
  for (const seed of [1, 2, 3, 4]) {
    it(`scenario ${seed} (${seed % 2 === 0 ? 'JOINED' : 'SHARED'} history)`, () => runScenario(seed), 120_000)
  }
})
