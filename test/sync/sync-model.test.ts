import { describe, expect, it } from 'vitest'
import { newUsers, type TestUser } from '../support/harness.ts'
import { AddReaction, PinMessage } from '../support/interactions.ts'
import {
  DeleteForMe,
  EditMessage,
  RecallMessage,
  RestoreForMe,
  SetFavorite,
  SetReminder,
} from '../support/lifecycle.ts'
import {
  AddMembers,
  createGroup,
  LeaveConversation,
  MarkRead,
  OpenPrivate,
  RemoveMember,
  SendMessage,
  SetTitle,
} from '../support/operations.ts'
import { seededRandom as random } from '../support/random.ts'
import { SaveDraft, UpdateSettings } from '../support/settings.ts'
import { Device, freshViewOf } from '../support/sync.ts'

/**
 * Convergence (Zulip's verify_action idea): a device keeps a snapshot and a token; random operations
 * (sends, edits, recalls, reactions, pins, titles, joins, removals, reads, settings, drafts,
 * favourites, reminders, deletes and restores for me) by three users and the first user's second device run while the device syncs in a loop, batch
 * size chosen at random. After every step, the snapshot with every batch applied must equal what a
 * fresh query shows. A failure names its seed.
 */

const SEEDS = [1, 2, 3, 4, 5, 6, 7, 8]
const STEPS = 18

type Sent = { id: string; conversationId: string; sender: TestUser }

async function scenario(seed: number) {
  const rnd = random(seed)
  const [viewer, a, b] = (await newUsers(3, 'sync-model')) as [TestUser, TestUser, TestUser]
  const owners = new Map<string, TestUser>()
  const groups: string[] = []
  for (const [owner, members] of [
    [a, [viewer, b]],
    [b, [viewer, a]],
    [a, [b]],
  ] as const) {
    const g = await createGroup(owner, [...members])
    owners.set(g.id, owner)
    groups.push(g.id)
  }
  const direct = (await viewer.run(OpenPrivate, { userId: a.id })).openPrivateConversation.id
  const conversations = [...groups, direct]
  const sent: Sent[] = []
  const device = new Device(viewer)
  await device.load()

  const ops: Record<string, () => Promise<unknown>> = {
    async send() {
      const conversationId = rnd.pick(conversations)!
      const sender = conversationId === direct ? rnd.pick([viewer, a])! : rnd.pick([viewer, a, b])!
      const response = await sender.try(SendMessage, {
        input: { conversationId, clientMessageId: `m-${seed}-${Math.random()}`, content: { text: { text: 'model' } } },
      })
      if (response.data) sent.push({ id: response.data.sendMessage.message.id, conversationId, sender })
    },
    edit: async () => {
      const m = rnd.pick(sent)
      if (m) await m.sender.try(EditMessage, { messageId: m.id, text: 'edited' })
    },
    recall: async () => {
      const m = rnd.pick(sent)
      if (m) await m.sender.try(RecallMessage, { messageId: m.id })
    },
    add: () => {
      const g = rnd.pick(groups)!
      return owners.get(g)!.try(AddMembers, { conversationId: g, userIds: [viewer.id] })
    },
    remove: () => {
      const g = rnd.pick(groups)!
      return owners.get(g)!.try(RemoveMember, { conversationId: g, userId: viewer.id })
    },
    leave: () => viewer.try(LeaveConversation, { conversationId: rnd.pick(groups)! }),
    // Reactions and pins take a pts (issue 16): sync covers them through lastPts with no code of its own.
    react: async () => {
      const m = rnd.pick(sent)
      if (m) await rnd.pick([viewer, a, b])!.try(AddReaction, { messageId: m.id, emoji: rnd.pick(['👍', '🎉', '❤️'])! })
    },
    pin: async () => {
      const m = rnd.pick(sent.filter((s) => groups.includes(s.conversationId)))
      if (m) await owners.get(m.conversationId)!.try(PinMessage, { messageId: m.id })
    },
    title: () => {
      const g = rnd.pick(groups)!
      return owners.get(g)!.try(SetTitle, { conversationId: g, title: `t${rnd.int(1000)}` })
    },
    // The viewer's second device: reads, favourites, reminders, delete-for-me.
    read: () => viewer.try(MarkRead, { conversationId: rnd.pick(conversations)! }),
    settings: () => {
      const input = rnd.pick([
        { archived: rnd.chance(0.5) },
        { pinned: rnd.chance(0.5) },
        { markedUnread: rnd.chance(0.5) },
        { doNotDisturbUntil: rnd.chance(0.5) ? new Date(Date.now() + 3_600_000).toISOString() : null },
      ])!
      return viewer.try(UpdateSettings, { id: rnd.pick(conversations)!, input })
    },
    draft: () =>
      viewer.try(SaveDraft, {
        id: rnd.pick(conversations)!,
        draft: rnd.chance(0.7) ? { text: `draft ${rnd.int(100)}` } : null,
      }),
    favorite: async () => {
      const m = rnd.pick(sent)
      if (m) await viewer.try(SetFavorite, { messageId: m.id, favorite: rnd.chance(0.7) })
    },
    remind: async () => {
      const m = rnd.pick(sent)
      if (m)
        await viewer.try(SetReminder, {
          messageId: m.id,
          remindAt: rnd.chance(0.7) ? new Date(Date.now() + 3_600_000 + rnd.int(1000)).toISOString() : null,
        })
    },
    delete: async () => {
      const m = rnd.pick(sent)
      if (m) await viewer.try(DeleteForMe, { ids: [m.id] })
    },
    restore: async () => {
      const m = rnd.pick(sent)
      if (m) await viewer.try(RestoreForMe, { ids: [m.id] })
    },
  }
  const weighted = [
    'send',
    'send',
    'send',
    'edit',
    'recall',
    'add',
    'add',
    'remove',
    'leave',
    'title',
    'react',
    'pin',
    'read',
    'read',
    'settings',
    'settings',
    'draft',
    'favorite',
    'favorite',
    'remind',
    'delete',
    'restore',
  ]

  for (let step = 0; step < STEPS; step++) {
    let syncing = true
    // The device syncs in a loop while the step's operations run (together, so their commits race).
    const loop = (async () => {
      while (syncing) await device.sync(rnd.pick([1, 2, 5, 100]))
    })()
    const names = Array.from({ length: 1 + rnd.int(4) }, () => rnd.pick(weighted)!)
    await Promise.all(names.map((name) => ops[name]!()))
    syncing = false
    await loop
    await device.sync()
    expect(device.view(), `seed ${seed}, step ${step} (${names.join(', ')})`).toEqual(await freshViewOf(viewer))
  }
}

describe('sync convergence (model-based)', () => {
  for (const seed of SEEDS) {
    it(`seed ${seed}: snapshot plus every batch equals a fresh query after each step`, () => scenario(seed), 120_000)
  }
})
