import { describe, expect, it } from 'vitest'
import { conversationTopic } from '../../src/realtime/events.ts'
import { codes, newUsers, request, testApp } from '../support/harness.ts'
import {
  conversationKey,
  EditMessage,
  EditToImage,
  listen,
  readMessage,
  RecallMessage,
  SendImage,
} from '../support/lifecycle.ts'
import { createGroup, MuteMember, OpenPrivate, SendMessage, sendText, SetRole } from '../support/operations.ts'
import { LifecycleSystemMessage } from '../support/views.ts'

describe('editMessage', () => {
  it('keeps every earlier version, oldest first, and takes a new pts each time', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    const sent = (await sendText(alice!, group.id, 'v1')).message
    const first = (await alice!.run(EditMessage, { messageId: sent.id, text: 'v2' })).editMessage
    const second = (await alice!.run(EditMessage, { messageId: sent.id, text: 'v3' })).editMessage

    expect(first.pts).toBe(sent.pts + 1)
    expect(second).toMatchObject({ status: 'EDITED', pts: sent.pts + 2, content: { text: 'v3' } })
    expect(second.editedAt).not.toBeNull()
    // Each earlier version with the time it was written: the original when sent, v2 at the first edit.
    expect(second.edits).toEqual([
      { version: 1, content: { text: 'v1' }, editedAt: sent.sentAt },
      { version: 2, content: { text: 'v2' }, editedAt: first.editedAt },
    ])
    // Everyone sees the latest version and its history; the conversation's lastPts moved with it.
    const seen = await readMessage(bob!, group.id, sent.seq)
    expect(seen.lastPts).toBe(sent.pts + 2)
    expect(seen.message).toMatchObject({ status: 'EDITED', content: { text: 'v3' }, edits: second.edits })
  })

  it('lets only the sender edit, TEXT only, with the code of each rule, and stores nothing when rejected', async () => {
    const [alice, bob, outsider] = await newUsers(3)
    const group = await createGroup(alice!, [bob!])
    const text = (await sendText(alice!, group.id, 'original')).message
    const image = (await alice!.run(SendImage, { conversationId: group.id, clientMessageId: `img-${text.id}` }))
      .sendMessage.message
    const system = (await alice!.run(LifecycleSystemMessage, { id: group.id })).conversation!.message!
    expect(system.senderType).toBe('SYSTEM')
    const before = await readMessage(alice!, group.id, text.seq)

    expect(codes(await bob!.try(EditMessage, { messageId: text.id, text: 'bob was here' }))).toEqual(['FORBIDDEN'])
    expect(codes(await outsider!.try(EditMessage, { messageId: text.id, text: 'outsider' }))).toEqual(['NOT_FOUND'])
    expect(codes(await alice!.try(EditMessage, { messageId: system.id, text: 'not mine' }))).toEqual(['FORBIDDEN'])
    expect(codes(await alice!.try(EditMessage, { messageId: image.id, text: 'caption' }))).toEqual(['NOT_EDITABLE'])
    expect(codes(await alice!.try(EditToImage, { messageId: text.id }))).toEqual(['BAD_USER_INPUT'])
    expect(codes(await alice!.try(EditMessage, { messageId: text.id, text: '   ' }))).toEqual(['BAD_USER_INPUT'])
    expect(codes(await alice!.try(EditMessage, { messageId: 'nonsense', text: 'x' }))).toEqual(['BAD_USER_INPUT'])

    expect(await readMessage(alice!, group.id, text.seq)).toEqual(before)
    expect(before.message).toMatchObject({ status: 'NORMAL', editedAt: null, edits: [], content: { text: 'original' } })
  })

  it('hides a directed message from who may not see it: NOT_FOUND, not FORBIDDEN', async () => {
    const [alice, bob, carol] = await newUsers(3)
    const group = await createGroup(alice!, [bob!, carol!])
    const input = {
      conversationId: group.id,
      clientMessageId: 'directed',
      content: { text: { text: 'for bob' } },
      visibleToUserIds: [bob!.id],
    }
    const directed = (await alice!.run(SendMessage, { input })).sendMessage.message
    expect(codes(await carol!.try(EditMessage, { messageId: directed.id, text: 'x' }))).toEqual(['NOT_FOUND'])
    expect(codes(await carol!.try(RecallMessage, { messageId: directed.id }))).toEqual(['NOT_FOUND'])
    expect(codes(await bob!.try(EditMessage, { messageId: directed.id, text: 'x' }))).toEqual(['FORBIDDEN'])
  })

  it('refuses to edit a recalled message with MESSAGE_RECALLED', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    const sent = (await sendText(alice!, group.id, 'soon gone')).message
    const recalled = (await alice!.run(RecallMessage, { messageId: sent.id })).recallMessage
    expect(codes(await alice!.try(EditMessage, { messageId: sent.id, text: 'back' }))).toEqual(['MESSAGE_RECALLED'])
    expect(await readMessage(alice!, group.id, sent.seq)).toEqual({ lastPts: recalled.pts, message: recalled })
  })
})

describe.sequential('editMessage and the sending rules', () => {
  it('holds an edit to the rules of a send: mute and the word filter', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    const sent = (await sendText(bob!, group.id, 'fine')).message
    const { app } = testApp()
    const saved = app.settings.sensitiveWords
    app.settings.sensitiveWords = ['forbiddenword']
    try {
      expect(codes(await bob!.try(EditMessage, { messageId: sent.id, text: 'now with ForbiddenWord' }))).toEqual([
        'CONTENT_REJECTED',
      ])
    } finally {
      app.settings.sensitiveWords = saved
    }
    await alice!.run(MuteMember, {
      conversationId: group.id,
      userId: bob!.id,
      until: new Date(Date.now() + 3_600_000).toISOString(),
    })
    const before = await readMessage(bob!, group.id, sent.seq)
    expect(codes(await bob!.try(EditMessage, { messageId: sent.id, text: 'sneaky' }))).toEqual(['SENDER_MUTED'])
    expect((await readMessage(bob!, group.id, sent.seq)).message).toEqual(before.message)
    expect(before.message).toMatchObject({ status: 'NORMAL', content: { text: 'fine' } })
  })
})

describe('recallMessage', () => {
  it('leaves a tombstone with a new pts, hides content and edit history, and answers a retry with the same tombstone', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    const sent = (await sendText(alice!, group.id, 'oops')).message
    await alice!.run(EditMessage, { messageId: sent.id, text: 'oops, edited' })
    const tombstone = (await alice!.run(RecallMessage, { messageId: sent.id })).recallMessage

    expect(tombstone).toMatchObject({
      seq: sent.seq,
      pts: sent.pts + 2,
      status: 'RECALLED',
      sentAt: sent.sentAt,
      sender: { id: alice!.id },
      recalledBy: { id: alice!.id },
      content: null,
      edits: [],
    })
    expect(tombstone.recalledAt).not.toBeNull()
    expect((await readMessage(bob!, group.id, sent.seq)).message).toEqual(tombstone)

    // Terminal: recalling again changes nothing and takes no pts.
    expect((await alice!.run(RecallMessage, { messageId: sent.id })).recallMessage).toEqual(tombstone)
    expect((await readMessage(alice!, group.id, sent.seq)).lastPts).toBe(tombstone.pts)
  })

  it('lets a group owner or admin recall any member message at any time, and nobody else', async () => {
    const [owner, admin, member, other] = await newUsers(4)
    const group = await createGroup(owner!, [admin!, member!, other!])
    await owner!.run(SetRole, { conversationId: group.id, userId: admin!.id, role: 'ADMIN' })
    const a = (await sendText(member!, group.id, 'a')).message
    const b = (await sendText(member!, group.id, 'b')).message
    const c = (await sendText(admin!, group.id, 'c')).message
    const system = (await owner!.run(LifecycleSystemMessage, { id: group.id })).conversation!.message!

    const { app } = testApp()
    const saved = app.settings.recallWindowSeconds
    app.settings.recallWindowSeconds = 0 // the window is over for senders; managers are not bound by it
    try {
      const before = await readMessage(other!, group.id, a.seq)
      expect(codes(await other!.try(RecallMessage, { messageId: a.id }))).toEqual(['FORBIDDEN'])
      expect(codes(await member!.try(RecallMessage, { messageId: c.id }))).toEqual(['FORBIDDEN'])
      expect(codes(await owner!.try(RecallMessage, { messageId: system.id }))).toEqual(['FORBIDDEN'])
      expect(await readMessage(other!, group.id, a.seq)).toEqual(before)

      expect((await admin!.run(RecallMessage, { messageId: a.id })).recallMessage).toMatchObject({
        status: 'RECALLED',
        recalledBy: { id: admin!.id },
      })
      expect((await owner!.run(RecallMessage, { messageId: b.id })).recallMessage).toMatchObject({
        status: 'RECALLED',
        recalledBy: { id: owner!.id },
      })
      expect((await owner!.run(RecallMessage, { messageId: c.id })).recallMessage.status).toBe('RECALLED')
    } finally {
      app.settings.recallWindowSeconds = saved
    }
  })

  it('keeps an admin from recalling the owner’s or another admin’s message: the one hierarchy of remove and mute', async () => {
    const [owner, admin, otherAdmin] = await newUsers(3)
    const group = await createGroup(owner!, [admin!, otherAdmin!])
    for (const user of [admin!, otherAdmin!])
      await owner!.run(SetRole, { conversationId: group.id, userId: user.id, role: 'ADMIN' })
    const fromOwner = (await sendText(owner!, group.id, 'from the owner')).message
    const fromAdmin = (await sendText(otherAdmin!, group.id, 'from an admin')).message
    expect(codes(await admin!.try(RecallMessage, { messageId: fromOwner.id }))).toEqual(['FORBIDDEN'])
    expect(codes(await admin!.try(RecallMessage, { messageId: fromAdmin.id }))).toEqual(['FORBIDDEN'])
    expect((await readMessage(owner!, group.id, fromAdmin.seq)).message!.status).toBe('NORMAL')
    expect((await otherAdmin!.run(RecallMessage, { messageId: fromAdmin.id })).recallMessage.status).toBe('RECALLED')
    expect((await owner!.run(RecallMessage, { messageId: fromOwner.id })).recallMessage.status).toBe('RECALLED')
  })

  it('does not give the peer in a private conversation recall rights, and answers a non-member NOT_FOUND', async () => {
    const [alice, bob, outsider] = await newUsers(3)
    const chat = (await alice!.run(OpenPrivate, { userId: bob!.id })).openPrivateConversation
    const sent = (await sendText(alice!, chat.id, 'private')).message
    expect(codes(await bob!.try(RecallMessage, { messageId: sent.id }))).toEqual(['FORBIDDEN'])
    expect(codes(await outsider!.try(RecallMessage, { messageId: sent.id }))).toEqual(['NOT_FOUND'])
    expect((await readMessage(alice!, chat.id, sent.seq)).message!.status).toBe('NORMAL')
    expect((await alice!.run(RecallMessage, { messageId: sent.id })).recallMessage.status).toBe('RECALLED')
  })
})

// The recall window lives in the file-wide settings object, so these run one at a time.
describe.sequential('the recall window', () => {
  it('lets the sender recall within recallWindowSeconds and answers RECALL_WINDOW_EXPIRED after it', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    const { app } = testApp()
    const saved = app.settings.recallWindowSeconds
    app.settings.recallWindowSeconds = 1
    try {
      const early = (await sendText(bob!, group.id, 'early')).message
      const late = (await sendText(bob!, group.id, 'late')).message
      expect((await bob!.run(RecallMessage, { messageId: early.id })).recallMessage.status).toBe('RECALLED')
      // The window closes: a millisecond, which `late` (sent before the recall above) is older than.
      app.settings.recallWindowSeconds = 0.001
      const before = await readMessage(bob!, group.id, late.seq)
      expect(codes(await bob!.try(RecallMessage, { messageId: late.id }))).toEqual(['RECALL_WINDOW_EXPIRED'])
      expect(await readMessage(bob!, group.id, late.seq)).toEqual(before)
      // The group owner is not bound by the window.
      expect((await alice!.run(RecallMessage, { messageId: late.id })).recallMessage.status).toBe('RECALLED')
    } finally {
      app.settings.recallWindowSeconds = saved
    }
  })

  it('holds the sender to the window where nobody manages (private; window 0 = senders never recall)', async () => {
    const [alice, bob] = await newUsers(2)
    const chat = (await alice!.run(OpenPrivate, { userId: bob!.id })).openPrivateConversation
    const sent = (await sendText(alice!, chat.id, 'no take-backs')).message
    const { app } = testApp()
    const saved = app.settings.recallWindowSeconds
    app.settings.recallWindowSeconds = 0
    try {
      expect(codes(await alice!.try(RecallMessage, { messageId: sent.id }))).toEqual(['RECALL_WINDOW_EXPIRED'])
    } finally {
      app.settings.recallWindowSeconds = saved
    }
  })
})

describe('an edit racing a recall', () => {
  it('never leaves edited content on a recalled message', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    for (let round = 0; round < 15; round++) {
      const sent = (await sendText(alice!, group.id, `round ${round}`)).message
      const edit = (text: string) => alice!.try(EditMessage, { messageId: sent.id, text })
      const [edit1, recall, edit2] = await Promise.all([
        edit('first'),
        alice!.run(RecallMessage, { messageId: sent.id }),
        edit('second'),
      ])
      const recallPts = recall.recallMessage.pts
      for (const response of [edit1, edit2]) {
        // An edit either landed before the recall (smaller pts) or was refused; never after it.
        if (response.errors) expect(codes(response)).toEqual(['MESSAGE_RECALLED'])
        else expect(response.data!.editMessage.pts).toBeLessThan(recallPts)
      }
      const final = await readMessage(bob!, group.id, sent.seq)
      expect(final.message).toMatchObject({ status: 'RECALLED', content: null, edits: [], pts: recallPts })
      expect(final.lastPts).toBe(recallPts)
    }
  })
})

describe('realtime', () => {
  it('publishes EDITED and RECALLED message events on the conversation topic after commit, none for a refused change', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    const sent = (await sendText(alice!, group.id, 'watch')).message
    const conversationId = conversationKey(group.id)
    const feed = await listen(testApp().app.realtime, conversationTopic(conversationId))
    try {
      const edited = (await alice!.run(EditMessage, { messageId: sent.id, text: 'watched' })).editMessage
      await bob!.try(EditMessage, { messageId: sent.id, text: 'refused' })
      const recalled = (await alice!.run(RecallMessage, { messageId: sent.id })).recallMessage
      await alice!.run(RecallMessage, { messageId: sent.id }) // a retry changes nothing
      expect(await feed.seen()).toEqual([
        { type: 'message', kind: 'EDITED', conversationId, seq: sent.seq, pts: edited.pts },
        { type: 'message', kind: 'RECALLED', conversationId, seq: sent.seq, pts: recalled.pts },
      ])
    } finally {
      await feed.stop()
    }
  })
})

it('answers UNAUTHENTICATED without a token', async () => {
  const [alice, bob] = await newUsers(2)
  const group = await createGroup(alice!, [bob!])
  const sent = (await sendText(alice!, group.id, 'x')).message
  expect(codes(await request(null, EditMessage, { messageId: sent.id, text: 'y' }))).toEqual(['UNAUTHENTICATED'])
})
