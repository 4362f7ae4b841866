import { Webhook as Verifier } from 'standardwebhooks'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseId } from '../../src/domain/core/ids.ts'
import type { WebhookWorker } from '../../src/domain/webhooks/index.ts'
import { RequestFriendship, RespondToFriendship } from '../support/friends.ts'
import { newUser, newUsers, testApp, type TestUser } from '../support/harness.ts'
import { AddMembers, createGroup, LeaveConversation, RemoveMember } from '../support/operations.ts'
import { CreateWebhook, eventually, startReceiver, startTestWorker, ViewerWebhooks } from '../support/webhooks.ts'

/** membership.changed and friendship.changed: events that are not messages, through the same outbox (decision 0276). */

let worker: WebhookWorker
beforeAll(() => {
  worker = startTestWorker(testApp().app)
})
afterAll(() => worker.stop())

const receivers: Awaited<ReturnType<typeof startReceiver>>[] = []
afterAll(() => Promise.all(receivers.map((r) => r.close())))

type EventBody = { type: string; data: Record<string, unknown> & { user?: { id: string }; viewer?: { id: string } } }

/** A receiver and `owner`'s webhook for `events` pointing at it; `bodies()` are the verified bodies received. */
async function listen(
  owner: TestUser,
  events: string[],
  extra: { scope?: 'VIEWER' | 'ALL'; conversationIds?: string[] } = {},
) {
  const r = await startReceiver()
  receivers.push(r)
  const { webhook, secret } = (
    await owner.run(CreateWebhook, { input: { url: r.url, events: events as never, ...extra } })
  ).createWebhook
  const verifier = new Verifier(secret)
  const bodies = () => r.requests.map((q) => verifier.verify(q.body, q.headers as Record<string, string>) as EventBody)
  return { r, webhook, bodies }
}

const deliveriesOf = async (owner: TestUser, webhookId: string) =>
  (await owner.run(ViewerWebhooks, {})).viewer.webhooks
    .find((w) => w.id === webhookId)!
    .deliveries.edges.map((e) => e.node)

const ref = (u: TestUser) => ({ id: u.id, handle: u.handle })

describe('webhooks: membership.changed', () => {
  it('tells members and the user concerned, signed, after the SYSTEM message and with its pts; no echo, nothing after removal', async () => {
    const [alice, carol, dave, erin] = await newUsers(4)
    const group = await createGroup(alice!, [carol!])
    const other = await createGroup(alice!, [carol!])
    const both = await listen(carol!, ['MESSAGE_ADDED', 'MEMBERSHIP_CHANGED'])
    const onlyMessages = await listen(carol!, ['MESSAGE_ADDED'], { conversationIds: [group.id] })
    const otherConversation = await listen(carol!, ['MEMBERSHIP_CHANGED'], { conversationIds: [other.id] })
    const concerned = await listen(dave!, ['MEMBERSHIP_CHANGED'])

    const added = (await alice!.run(AddMembers, { conversationId: group.id, userIds: [dave!.id] })).addGroupMembers
    await alice!.run(RemoveMember, { conversationId: group.id, userId: dave!.id })
    await alice!.run(AddMembers, { conversationId: group.id, userIds: [erin!.id] })
    await carol!.run(LeaveConversation, { conversationId: group.id })

    await both.r.until((q) => q.length === 6)
    expect(both.bodies().map((b) => [b.type, b.data.change ?? null, b.data.pts])).toEqual([
      ['message.added', null, added.lastPts],
      ['membership.changed', 'ADDED', added.lastPts],
      ['message.added', null, added.lastPts + 1],
      ['membership.changed', 'REMOVED', added.lastPts + 1],
      ['message.added', null, added.lastPts + 2],
      ['membership.changed', 'ADDED', added.lastPts + 2],
    ])
    expect(both.bodies()[1]!.data).toEqual({
      conversationId: group.id,
      pts: added.lastPts,
      change: 'ADDED',
      user: ref(dave!),
      actor: ref(alice!),
    })
    // Dave hears his own addition and removal (they concern him), not Erin's joining after he left.
    await concerned.r.until((q) => q.length === 2)
    expect(concerned.bodies().map((b) => [b.data.change, b.data.user])).toEqual([
      ['ADDED', ref(dave!)],
      ['REMOVED', ref(dave!)],
    ])
    expect(await deliveriesOf(dave!, concerned.webhook.id)).toHaveLength(2)
    // Carol's leaving is her own change; the events filter and the conversation filter held.
    expect(await deliveriesOf(carol!, both.webhook.id)).toHaveLength(6)
    expect((await deliveriesOf(carol!, onlyMessages.webhook.id)).map((d) => d.eventType)).toEqual([
      'MESSAGE_ADDED',
      'MESSAGE_ADDED',
      'MESSAGE_ADDED',
    ])
    expect(await deliveriesOf(carol!, otherConversation.webhook.id)).toEqual([])
  })

  it('scope ALL hears a conversation the operator is not in, the actor’s own changes included', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [])
    const operator = await newUser({ operator: true })
    const all = await listen(operator, ['MEMBERSHIP_CHANGED'], { scope: 'ALL', conversationIds: [group.id] })
    await alice!.run(AddMembers, { conversationId: group.id, userIds: [bob!.id] })
    await bob!.run(LeaveConversation, { conversationId: group.id })
    await all.r.until((q) => q.length === 2)
    expect(all.bodies().map((b) => [b.data.change, b.data.user, b.data.actor])).toEqual([
      ['ADDED', ref(bob!), ref(alice!)],
      ['LEFT', ref(bob!), ref(bob!)],
    ])
  })
})

describe('webhooks: friendship.changed', () => {
  it('tells each side the state as it sees it, never its own change; ALL scope once per change; no conversation', async () => {
    const [alice, bob] = await newUsers(2)
    const operator = await newUser({ operator: true })
    const aliceHook = await listen(alice!, ['FRIENDSHIP_CHANGED'])
    const bobHook = await listen(bob!, ['FRIENDSHIP_CHANGED'])
    const narrowed = await listen(bob!, ['FRIENDSHIP_CHANGED'], { conversationIds: [(await createGroup(bob!, [])).id] })
    const all = await listen(operator, ['FRIENDSHIP_CHANGED'], { scope: 'ALL' })

    await bob!.run(RequestFriendship, { userId: alice!.id })
    await alice!.run(RespondToFriendship, { userId: bob!.id, accept: true })

    await aliceHook.r.until((q) => q.length === 1)
    await bobHook.r.until((q) => q.length === 1)
    expect(aliceHook.bodies().map((b) => b.data)).toEqual([
      { viewer: ref(alice!), user: ref(bob!), state: 'REQUESTED_BY_THEM' },
    ])
    expect(bobHook.bodies().map((b) => [b.type, b.data])).toEqual([
      ['friendship.changed', { viewer: ref(bob!), user: ref(alice!), state: 'FRIENDS' }],
    ])
    const [delivery] = await deliveriesOf(bob!, bobHook.webhook.id)
    expect(delivery).toMatchObject({ eventType: 'FRIENDSHIP_CHANGED', conversation: null, pts: null })
    // The operator's hook hears every pair (other tests' too): this pair's two changes, from the actor's side.
    const thisPair = () => all.bodies().filter((b) => [alice!.id, bob!.id].includes(b.data.viewer!.id))
    await all.r.until(() => thisPair().length === 2)
    expect(thisPair().map((b) => [b.data.viewer, b.data.state])).toEqual([
      [ref(bob!), 'REQUESTED_BY_VIEWER'],
      [ref(alice!), 'FRIENDS'],
    ])
    expect(await deliveriesOf(bob!, narrowed.webhook.id)).toEqual([])
  })

  it('sends nothing for a change that was rolled back at commit, and the next change is the first delivery', async () => {
    const [alice, bob] = await newUsers(2)
    const hooked = await listen(alice!, ['FRIENDSHIP_CHANGED'])
    const bobId = parseId(bob!.id, 'User')
    const trigger = `fail_friendship_of_${bobId}`
    // A deferred constraint trigger fails the COMMIT itself: the outbox rows were written by then.
    await testApp().db.$executeRawUnsafe(`CREATE FUNCTION ${trigger}() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.user_id = ${bobId} THEN RAISE EXCEPTION 'refused at commit'; END IF; RETURN NULL; END $$`)
    await testApp().db.$executeRawUnsafe(`CREATE CONSTRAINT TRIGGER ${trigger} AFTER INSERT OR UPDATE ON friendships
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ${trigger}()`)
    try {
      expect((await bob!.try(RequestFriendship, { userId: alice!.id })).errors).toHaveLength(1)
    } finally {
      await testApp().db.$executeRawUnsafe(`DROP TRIGGER ${trigger} ON friendships`)
      await testApp().db.$executeRawUnsafe(`DROP FUNCTION ${trigger}()`)
    }
    expect(await deliveriesOf(alice!, hooked.webhook.id)).toEqual([])
    await bob!.run(RequestFriendship, { userId: alice!.id })
    await hooked.r.until((q) => q.length === 1)
    const delivered = await eventually(
      () => deliveriesOf(alice!, hooked.webhook.id),
      (ds) => ds[0]?.status === 'DELIVERED',
    )
    expect(delivered).toHaveLength(1)
    expect(hooked.bodies()[0]!.data).toMatchObject({ state: 'REQUESTED_BY_THEM', user: ref(bob!) })
  })
})
