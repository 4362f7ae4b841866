import { describe, expect, it } from 'vitest'
import { newUsers, uniqueHandle, userWithHandle, type TestUser } from '../support/harness.ts'
import { EditMessage, RecallMessage } from '../support/lifecycle.ts'
import { AddMembers, createGroup, SendMessage, sendText } from '../support/operations.ts'
import { liveServer, subscribeWs, waitForSubscriptions } from '../support/server.ts'
import { AlertEvents, SaveDraft, SettingsEvents, UpdateSettings, ViewerSettings } from '../support/settings.ts'

const instance = liveServer()
const FAR_FUTURE = '9999-12-31T00:00:00.000Z'

type InboxEvent = {
  __typename: string
  kind?: string
  alert?: boolean
  message?: { id: string }
  conversation?: { id: string; viewerSettings: unknown }
}
const inboxOf = (user: TestUser) => subscribeWs(instance.connect(user.token), SettingsEvents)
const eventsOf = (events: { inboxEvents: unknown }[]) => events.map((e) => e.inboxEvents as InboxEvent)

let sent = 0
const send = (
  user: TestUser,
  conversationId: string,
  extra: { mentionUserIds?: string[]; mentionAll?: boolean; visibleToUserIds?: string[] } = {},
) =>
  user.run(SendMessage, {
    input: { conversationId, clientMessageId: `live-${++sent}`, content: { text: { text: `t${sent}` } }, ...extra },
  })

describe('MessageEvent.alert', () => {
  it('is true for others’ additions outside do-not-disturb and for mentions and @all inside it; false for own, edits, recalls and SYSTEM', async () => {
    const [owner, viewer, third, fourth] = await newUsers(4)
    const group = await createGroup(owner!, [viewer!, third!])
    const inbox = inboxOf(viewer!)
    const stream = subscribeWs(instance.connect(viewer!.token), AlertEvents, {
      conversationId: group.id,
      sincePts: group.lastPts,
    })
    await waitForSubscriptions(instance.server.app, viewer!, 2)

    const other = await send(owner!, group.id)
    await send(viewer!, group.id)
    await owner!.run(EditMessage, { messageId: other.sendMessage.message.id, text: 'edited' })
    await owner!.run(RecallMessage, { messageId: other.sendMessage.message.id })
    await owner!.run(AddMembers, { conversationId: group.id, userIds: [fourth!.id] })
    // Directed at someone else: the viewer gets no event at all.
    await send(owner!, group.id, { visibleToUserIds: [third!.id] })
    await viewer!.run(UpdateSettings, { id: group.id, input: { doNotDisturbUntil: FAR_FUTURE } })
    await send(owner!, group.id)
    await send(owner!, group.id, { mentionUserIds: [viewer!.id] })
    await send(owner!, group.id, { mentionAll: true })
    await send(viewer!, group.id, { mentionAll: false, mentionUserIds: [viewer!.id] })

    const expected = [
      ['ADDED', true], // someone else's
      ['ADDED', false], // own
      ['EDITED', false],
      ['RECALLED', false],
      ['ADDED', false], // SYSTEM: MEMBERS_ADDED
      ['ADDED', false], // do-not-disturb
      ['ADDED', true], // a mention breaks through
      ['ADDED', true], // @all too
      ['ADDED', false], // own, even mentioning oneself
    ]
    const live = (await stream.waitFor(expected.length)).map(
      (e) => e.conversationEvents as { kind: string; alert: boolean },
    )
    expect(live.map((e) => [e.kind, e.alert])).toEqual(expected)
    const fromInbox = eventsOf(await inbox.waitFor(expected.length + 1)).filter((e) => e.__typename === 'MessageEvent')
    expect(fromInbox.map((e) => [e.kind, e.alert])).toEqual(expected)

    // A replay alerts by the same rule, under do-not-disturb as it is now.
    const replay = subscribeWs(instance.connect(viewer!.token), AlertEvents, {
      conversationId: group.id,
      sincePts: group.lastPts,
    })
    // Each message once, at its latest change; the directed one stays hidden.
    const replayed = (await replay.waitFor(7)).map((e) => e.conversationEvents as { kind: string; alert: boolean })
    expect(replayed.map((e) => [e.kind, e.alert])).toEqual([
      ['ADDED', false], // own
      ['RECALLED', false],
      ['ADDED', false], // SYSTEM
      ['ADDED', false], // no mention, in do-not-disturb
      ['ADDED', true],
      ['ADDED', true],
      ['ADDED', false],
    ])
    for (const r of [inbox, stream, replay]) r.dispose()
  })
})

describe("the viewer's other devices", () => {
  it('see settings and draft changes live (a send clearing the draft too), and no one else gets an event', async () => {
    const handle = uniqueHandle('devices')
    const phone = await userWithHandle(handle)
    const laptop = await userWithHandle(handle, { expiresIn: '29d' })
    expect(laptop.token).not.toBe(phone.token)
    const [friend] = await newUsers(1)
    const group = await createGroup(friend!, [phone])
    const laptopInbox = inboxOf(laptop)
    const friendInbox = inboxOf(friend!)
    await waitForSubscriptions(instance.server.app, phone, 1)
    await waitForSubscriptions(instance.server.app, friend!, 1)

    await phone.run(UpdateSettings, { id: group.id, input: { pinned: true, doNotDisturbUntil: FAR_FUTURE } })
    await phone.run(SaveDraft, { id: group.id, draft: { text: 'typed on the phone', mentionUserIds: [friend!.id] } })
    await sendText(phone, group.id, 'sent from the phone')
    const marker = await sendText(friend!, group.id, 'marker')

    const laptopEvents = eventsOf(await laptopInbox.waitFor(5))
    expect(laptopEvents.slice(0, 2).map((e) => e.__typename)).toEqual([
      'ConversationUpdatedEvent',
      'ConversationUpdatedEvent',
    ])
    expect(laptopEvents[0]!.conversation).toMatchObject({ id: group.id, viewerSettings: { doNotDisturb: true } })
    expect(laptopEvents[1]!.conversation!.viewerSettings).toMatchObject({
      draft: { text: 'typed on the phone', mentions: [{ id: friend!.id }] },
    })
    // The send cleared the draft in its own transaction: the laptop reads it gone (the two topics may interleave).
    const afterSend = laptopEvents.slice(2)
    expect(afterSend.filter((e) => e.__typename === 'MessageEvent')).toHaveLength(2)
    expect(
      afterSend.find((e) => e.__typename === 'ConversationUpdatedEvent')!.conversation!.viewerSettings,
    ).toMatchObject({ draft: null, doNotDisturb: true })
    expect((await laptop.run(ViewerSettings, { id: group.id })).conversation!.viewerSettings.draft).toBeNull()

    const friendEvents = eventsOf(
      await friendInbox.waitUntil((events) => events.some((e) => eventsOf([e])[0]!.message?.id === marker.message.id)),
    )
    expect(friendEvents.map((e) => e.__typename)).toEqual(['MessageEvent', 'MessageEvent'])
    laptopInbox.dispose()
    friendInbox.dispose()
  })

  it('converge under concurrent writes from two devices: last write wins per field, never a mix within one', async () => {
    const handle = uniqueHandle('race')
    const phone = await userWithHandle(handle)
    const laptop = await userWithHandle(handle, { expiresIn: '29d' })
    const [friend] = await newUsers(1)
    const group = await createGroup(friend!, [phone])
    const watching = inboxOf(laptop)
    await waitForSubscriptions(instance.server.app, phone, 1)

    const rounds = 15
    // Each device writes one after another; the two devices race each other.
    const writes = async (device: TestUser, name: string, mentions: string[]) => {
      for (let i = 0; i < rounds; i++) {
        await Promise.all([
          device.run(SaveDraft, { id: group.id, draft: { text: `${name} ${i}`, mentionUserIds: mentions } }),
          device.run(UpdateSettings, {
            id: group.id,
            input: name === 'phone' ? { archived: i % 2 === 0 } : { markedUnread: i % 2 === 0 },
          }),
        ])
      }
    }
    await Promise.all([writes(phone, 'phone', [friend!.id]), writes(laptop, 'laptop', [])])

    const [onPhone, onLaptop] = await Promise.all(
      [phone, laptop].map(async (d) => (await d.run(ViewerSettings, { id: group.id })).conversation!.viewerSettings),
    )
    expect(onLaptop).toEqual(onPhone)
    const draft = onPhone!.draft!
    // Text and mentions come from one write: the phone's drafts mention the friend, the laptop's nobody.
    expect(draft.mentions).toEqual(draft.text.startsWith('phone') ? [{ id: friend!.id }] : [])
    // The last draft of one device or the other; each device's last write of its own field.
    expect([`phone ${rounds - 1}`, `laptop ${rounds - 1}`]).toContain(draft.text)
    expect(onPhone).toMatchObject({ archived: true, markedUnread: true })
    // Every write reached the laptop's stream, and the last event shows the final state.
    const events = eventsOf(await watching.waitFor(4 * rounds))
    expect(events.at(-1)!.conversation!.viewerSettings).toEqual(onPhone)
    watching.dispose()
  })
})
