import { describe, expect, it, vi } from 'vitest'
import { graphql } from '../gql/gql.ts'
import { codes, newUser, newUsers } from '../support/harness.ts'
import { ConversationEvents } from '../support/live.ts'
import { createGroup, sendText, WhoAmI } from '../support/operations.ts'
import { post, subscribeSse, subscribeWs, twoInstances, waitForSubscriptions } from '../support/server.ts'

const DeactivateUser = graphql(`
  mutation GovernanceDeactivateUser($userId: ID!) {
    deactivateUser(userId: $userId) {
      id
      deactivated
    }
  }
`)

const ReactivateUser = graphql(`
  mutation GovernanceReactivateUser($userId: ID!) {
    reactivateUser(userId: $userId) {
      id
      deactivated
    }
  }
`)

const SenderOfLast = graphql(`
  query GovernanceSenderOfLast($id: ID!) {
    conversation(id: $id) {
      messages(last: 1) {
        edges {
          node {
            sender {
              id
              deactivated
            }
          }
        }
      }
    }
  }
`)

const AuditOf = graphql(`
  query GovernanceDeactivationAudit($action: String) {
    auditLog(action: $action, first: 100) {
      edges {
        node {
          targetId
        }
      }
    }
  }
`)

const instances = twoInstances()

describe('deactivateUser', () => {
  it('refuses every token of the user at once on another instance, ends their sockets and streams, and reactivateUser undoes it', async () => {
    const operator = await newUser({ operator: true })
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    await sendText(bob!, group.id, 'before leaving')
    const { a, b } = instances
    // Instance b has seen bob (its token check caches him) and holds his socket and SSE stream.
    expect((await post(b.url, bob!.token, WhoAmI)).errors).toBeUndefined()
    const socket = subscribeWs(instances.connect(b, bob!.token), ConversationEvents, { conversationId: group.id })
    const stream = subscribeSse(b.url, bob!.token, ConversationEvents, { conversationId: group.id })
    await waitForSubscriptions(b.app, bob!, 2)

    const started = Date.now()
    const deactivated = await post(a.url, operator.token, DeactivateUser, { userId: bob!.id })
    expect(deactivated.data?.deactivateUser).toEqual({ id: bob!.id, deactivated: true })
    let refused = await post(b.url, bob!.token, WhoAmI)
    while (!refused.errors && Date.now() - started < 1_000) refused = await post(b.url, bob!.token, WhoAmI)
    expect(codes(refused)).toEqual(['UNAUTHENTICATED'])
    expect(Date.now() - started).toBeLessThan(1_000)
    // The same instance that deactivated refuses him too, on its very next request.
    expect(codes(await post(a.url, bob!.token, WhoAmI))).toEqual(['UNAUTHENTICATED'])
    await Promise.all([socket.ended(), stream.ended()])
    await waitForSubscriptions(b.app, bob!, 0)

    // He stays in history, shown as deactivated; others carry on.
    const history = await post(b.url, alice!.token, SenderOfLast, { id: group.id })
    expect(history.data?.conversation?.messages.edges[0]?.node.sender).toEqual({ id: bob!.id, deactivated: true })
    // A new socket of his is refused as well.
    const again = subscribeWs(instances.connect(b, bob!.token), ConversationEvents, { conversationId: group.id })
    await again.ended()
    expect(again.events).toEqual([])

    const reactivated = await post(b.url, operator.token, ReactivateUser, { userId: bob!.id })
    expect(reactivated.data?.reactivateUser).toEqual({ id: bob!.id, deactivated: false })
    // The instance that reactivated him accepts him at once; the other once the bus has told it.
    expect((await post(b.url, bob!.token, WhoAmI)).errors).toBeUndefined()
    await vi.waitFor(async () => expect((await post(a.url, bob!.token, WhoAmI)).errors).toBeUndefined(), {
      timeout: 5_000,
      interval: 50,
    })

    const audit = await post(a.url, operator.token, AuditOf, { action: 'user.deactivate' })
    expect(audit.data?.auditLog.edges.map((e) => e.node.targetId)).toContain(bob!.id)
  })

  it('is for operators only and needs an existing user', async () => {
    const [alice, bob] = await newUsers(2)
    const operator = await newUser({ operator: true })
    const { a } = instances
    expect(codes(await post(a.url, alice!.token, DeactivateUser, { userId: bob!.id }))).toEqual(['FORBIDDEN'])
    expect(codes(await post(a.url, alice!.token, ReactivateUser, { userId: bob!.id }))).toEqual(['FORBIDDEN'])
    expect((await post(a.url, bob!.token, WhoAmI)).errors).toBeUndefined()
    const missing = Buffer.from('User:999999999').toString('base64url')
    expect(codes(await post(a.url, operator.token, DeactivateUser, { userId: missing }))).toEqual(['NOT_FOUND'])
  })
})
