import { describe, expect, it } from 'vitest'
import { messageGlobalId, parseId } from '../../src/domain/core/ids.ts'
import { newUsers, type TestUser } from '../support/harness.ts'
import { DeleteForMe, RecallMessage, RestoreForMe } from '../support/lifecycle.ts'
import {
  AddMembers,
  createGroup,
  MarkRead,
  OpenPrivate,
  RemoveMember,
  SendMessage,
  SetTitle,
} from '../support/operations.ts'
import { ModelCounts, ModelReaders, Receipts } from '../support/readViews.ts'
import { UpdateSettings } from '../support/settings.ts'
import { ConversationModel, random, SETTINGS_OFF, type ModelMember, type ModelMessage } from '../support/unreadModel.ts'

const FAR_FUTURE = '9999-12-31T00:00:00.000Z'
const PAST = '2000-01-01T00:00:00.000Z'

/**
 * Unread counts and receipts against a brute-force model: random scenarios of sends (directed,
 * mentions, @all), reads, deletions for me and restores, recalls, members joining and leaving,
 * system messages, and each member's do-not-disturb, mark-unread and archive, then every user's
 * counts, list and total and every sender's receipts compared with the model.
 */

async function runScenario(seed: number) {
  const rand = random(seed)
  const users = await newUsers(6)
  const owner = 0
  const joinedHistory = seed % 2 === 1
  const created = await createGroup(users[0]!, users.slice(1, 4), joinedHistory ? 'JOINED' : 'SHARED')
  const group = new ConversationModel(created.id, 'GROUP', joinedHistory, created.lastSeq, [0, 1, 2, 3])
  const { openPrivateConversation: chat } = await users[1]!.run(OpenPrivate, { userId: users[2]!.id })
  const direct = new ConversationModel(chat.id, 'PRIVATE', false, chat.lastSeq, [1, 2])
  let sent = 0

  const send = async (c: ConversationModel) => {
    const sender = rand.pick(c.current())!
    const others = c.current().filter((u) => u !== sender)
    const to = c.type === 'GROUP' && rand.chance(0.25) ? rand.subset(others, 0.5) : []
    const mentions = rand.chance(0.35) ? rand.subset(to.length ? to : others, 0.5) : []
    const all = sender === owner && c.type === 'GROUP' && rand.chance(0.2)
    const { sendMessage } = await users[sender]!.run(SendMessage, {
      input: {
        conversationId: c.id,
        clientMessageId: `model-${++sent}`,
        content: { text: { text: `m${sent}` } },
        mentionUserIds: mentions.map((u) => users[u]!.id),
        mentionAll: all,
        visibleToUserIds: to.map((u) => users[u]!.id),
      },
    })
    expect(sendMessage.message.seq).toBe(c.append({ sender, mentions, all, to }).seq)
  }
  const markRead = async (c: ConversationModel) => {
    const reader = rand.pick(c.current())!
    const seq = rand.chance(0.3) ? undefined : rand.int(c.lastSeq + 3)
    c.read(reader, seq ?? c.lastSeq)
    const { markConversationRead } = await users[reader]!.run(MarkRead, { conversationId: c.id, seq })
    expect(markConversationRead.lastReadSeq).toBe(c.members.get(reader)!.pos)
  }
  /**
   * One member changes some of their settings (omitted ones stay): do-not-disturb (on, off, or a
   * past time, which is off), mark unread, archive.
   */
  const changeSettings = async (c: ConversationModel) => {
    const u = rand.pick(c.current())!
    const member = c.members.get(u)!
    const input: { doNotDisturbUntil?: string | null; markedUnread?: boolean; archived?: boolean } = {}
    if (rand.chance(0.5)) {
      input.doNotDisturbUntil = rand.chance(0.5) ? FAR_FUTURE : rand.pick([null, PAST])!
      member.dnd = input.doNotDisturbUntil === FAR_FUTURE
    }
    if (rand.chance(0.5)) member.markedUnread = input.markedUnread = rand.chance(0.8)
    if (rand.chance(0.6)) member.archived = input.archived = rand.chance(0.8)
    await users[u]!.run(UpdateSettings, { id: c.id, input })
  }
  const messageId = (c: ConversationModel, m: ModelMessage) =>
    messageGlobalId({ conversationId: parseId(c.id, 'Conversation'), seq: m.seq })
  const deleteOrRestore = async (c: ConversationModel, restore: boolean) => {
    const user = rand.pick(c.current())!
    const candidates = c.messages.filter((m) => c.sees(user, m, true) && c.isDeleted(user, m) === restore)
    // Mostly messages that would count as unread, where a deletion changes the counts.
    const unread = candidates.filter((m) => m.sender !== null && m.sender !== user && m.seq > c.members.get(user)!.pos)
    const target = rand.pick(unread.length && rand.chance(0.7) ? unread : candidates)
    if (!target) return
    const ids = [messageId(c, target)]
    if (restore) {
      await users[user]!.run(RestoreForMe, { ids })
      c.deleted.delete(`${user}:${target.seq}`)
    } else {
      await users[user]!.run(DeleteForMe, { ids })
      c.deleted.add(`${user}:${target.seq}`)
    }
  }
  const recall = async (c: ConversationModel) => {
    const target = rand.pick(c.messages.filter((m) => m.sender !== null && !m.recalled))
    if (!target) return
    // The group owner recalls anything they can see; otherwise the sender (within the window).
    const recaller = c.type === 'GROUP' && c.sees(owner, target) ? owner : target.sender!
    if (!c.sees(recaller, target)) return
    await users[recaller]!.run(RecallMessage, { messageId: messageId(c, target) })
    target.recalled = true
  }
  /** A group change that writes a SYSTEM message; returns the conversation's new lastSeq. */
  const systemMessage = async (run: () => Promise<number>) => {
    const lastSeq = await run()
    expect(lastSeq).toBe(group.append({ sender: null, mentions: [], all: false, to: [] }).seq)
  }
  const addMember = async () => {
    const newcomer = rand.pick([1, 2, 3, 4, 5].filter((u) => !group.members.get(u)?.current))
    if (newcomer === undefined) return
    await systemMessage(
      async () =>
        (await users[owner]!.run(AddMembers, { conversationId: group.id, userIds: [users[newcomer]!.id] }))
          .addGroupMembers.lastSeq,
    )
    // A returning member keeps their read position; JOINED history starts at the "added" message.
    const before = group.members.get(newcomer)
    group.members.set(newcomer, {
      ...SETTINGS_OFF,
      ...before,
      current: true,
      pos: before?.pos ?? 0,
      visibleFrom: joinedHistory ? group.lastSeq : 1,
    })
  }
  const removeMember = async () => {
    const leaving = rand.pick(group.current().filter((u) => u !== owner))
    if (leaving === undefined) return
    await systemMessage(
      async () =>
        (await users[owner]!.run(RemoveMember, { conversationId: group.id, userId: users[leaving]!.id }))
          .removeGroupMember.lastSeq,
    )
    group.members.get(leaving)!.current = false
  }

  for (let step = 0; step < 60; step++) {
    const c = rand.chance(0.7) ? group : direct
    const roll = rand.int(100)
    if (roll < 38) await send(c)
    else if (roll < 50) await changeSettings(c)
    else if (roll < 65) await markRead(c)
    else if (roll < 73) await deleteOrRestore(c, false)
    else if (roll < 77) await deleteOrRestore(c, true)
    else if (roll < 83) await recall(c)
    else if (roll < 88)
      await systemMessage(
        async () =>
          (await users[owner]!.run(SetTitle, { conversationId: group.id, title: `t${step}` })).setConversationTitle
            .lastSeq,
      )
    else if (roll < 91) await addMember()
    else if (roll < 95) await changeSettings(c)
    else await removeMember()
    if (step % 10 === 9) await check(step, { readers: step === 59 })
  }

  /**
   * Every user's inbox (which conversations, their counts and read positions, the total) and the
   * receipts on their own messages; reader lists are many requests, so only when asked.
   */
  async function check(step: number, opts: { readers: boolean }) {
    const byId = (a: { id: string }, b: { id: string }) => a.id.localeCompare(b.id)
    for (const [u, user] of users.entries()) {
      const mine = [group, direct].filter((c) => c.members.get(u)?.current)
      const listed = mine.filter((c) => !c.members.get(u)!.archived)
      const settings = (m: ModelMember) => ({ doNotDisturb: m.dnd, markedUnread: m.markedUnread })
      const expected = listed.map((c) => ({
        id: c.id,
        ...c.unread(u),
        viewerMember: { lastReadSeq: c.members.get(u)!.pos },
        viewerSettings: settings(c.members.get(u)!),
      }))
      const { viewer } = await user.run(ModelCounts)
      expect(viewer.conversations.edges.map((e) => e.node).sort(byId), `user ${u} after step ${step}`).toEqual(
        expected.sort(byId),
      )
      expect(viewer.archived.edges.map((e) => e.node.id).sort(), `archived of user ${u} after step ${step}`).toEqual(
        mine
          .filter((c) => c.members.get(u)!.archived)
          .map((c) => c.id)
          .sort(),
      )
      expect(viewer.unreadTotal, `total of user ${u} after step ${step}`).toBe(
        mine.reduce((sum, c) => sum + c.totalShare(u), 0),
      )
      for (const c of mine) await checkReceipts(c, u, user, opts.readers)
    }
  }

  async function checkReceipts(c: ConversationModel, u: number, user: TestUser, withReaders: boolean) {
    const { conversation } = await user.run(Receipts, { id: c.id, last: 100 })
    for (const { node } of conversation!.messages.edges) {
      const m = c.messages[node.seq - 1]!
      if (m.sender !== u) {
        expect(node.receipt, `receipt of ${c.type} seq ${m.seq} seen by user ${u}`).toBeNull()
        continue
      }
      const model = c.receipt(m)
      expect(node.receipt, `receipt of ${c.type} seq ${m.seq}`).toEqual({
        readByPeer: c.type === 'PRIVATE' ? model.readers.length > 0 : null,
        readCount: model.readers.length,
        unreadCount: model.notRead.length,
      })
      if (!withReaders) continue
      const { readers, notRead } = (await user.run(ModelReaders, { id: c.id, seq: m.seq })).conversation!.message!
        .receipt!
      const ids = (list: number[]) => list.map((i) => users[i]!.id).sort()
      expect(readers.edges.map((e) => e.node.id).sort()).toEqual(ids(model.readers))
      expect(notRead.edges.map((e) => e.node.id).sort()).toEqual(ids(model.notRead))
    }
  }
}

/**
 * Three fixed seeds and a fresh one per run, or the seed in UNREAD_MODEL_SEED alone: each test's name
 * carries its seed, and a failure prints how to replay it.
 */
const replaying = process.env.UNREAD_MODEL_SEED
if (replaying !== undefined && !Number.isSafeInteger(Number(replaying)))
  throw new Error(`UNREAD_MODEL_SEED must be an integer, not "${replaying}"`)
const seeds = replaying ? [Number(replaying)] : [1, 2, 3, Date.now() % 1_000_000]

describe('unread counts and receipts against a brute-force model', () => {
  for (const seed of seeds) {
    it(`matches the model in random scenario ${seed}`, async () => {
      try {
        await runScenario(seed)
      } catch (error) {
        console.error(
          `unread model: scenario ${seed} failed; replay it with UNREAD_MODEL_SEED=${seed} npx vitest run test/reads/unread-model.test.ts`,
        )
        throw error
      }
    })
  }
})
