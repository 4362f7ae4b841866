import { describe, expect, it } from 'vitest'
import { graphql } from '../gql/gql.ts'
import { codes, newUser, newUsers, request } from '../support/harness.ts'
import { createGroup, sendText } from '../support/operations.ts'
import { AdminMessages } from '../support/views.ts'

const AuditLog = graphql(`
  query GovernanceAuditLog($first: Int, $after: String, $actorId: ID, $action: String) {
    auditLog(first: $first, after: $after, actorId: $actorId, action: $action) {
      edges {
        node {
          id
          actor {
            id
          }
          action
          targetId
          detail
          at
        }
      }
      pageInfo {
        hasNextPage
        endCursor
      }
    }
  }
`)

const AuditNode = graphql(`
  query GovernanceAuditNode($id: ID!) {
    node(id: $id) {
      ... on AuditEntry {
        action
      }
    }
  }
`)

describe('auditLog', () => {
  it('is for operators only', async () => {
    const user = await newUser()
    expect(codes(await user.try(AuditLog, {}))).toEqual(['FORBIDDEN'])
    expect(codes(await request(null, AuditLog, {}))).toEqual(['UNAUTHENTICATED'])
  })

  it('records every page of adminMessages an operator reads, with the filter, newest first', async () => {
    const operator = await newUser({ operator: true })
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    await sendText(alice!, group.id, 'under investigation')
    await operator.run(AdminMessages, { filter: { conversationId: group.id }, first: 1 })
    await operator.run(AdminMessages, { filter: { text: 'investigation' } })

    const { auditLog } = await operator.run(AuditLog, { actorId: operator.id, first: 10 })
    expect(auditLog.edges.map((e) => [e.node.action, e.node.targetId, e.node.actor.id])).toEqual([
      ['adminMessages.read', null, operator.id],
      ['adminMessages.read', group.id, operator.id],
    ])
    expect(auditLog.edges[1]!.node.detail).toEqual({ filter: { conversationId: group.id }, first: 1 })
    expect(auditLog.pageInfo.hasNextPage).toBe(false)

    // Paged without gaps, and filtered by action.
    const first = await operator.run(AuditLog, { actorId: operator.id, action: 'adminMessages.read', first: 1 })
    const second = await operator.run(AuditLog, {
      actorId: operator.id,
      first: 1,
      after: first.auditLog.pageInfo.endCursor,
    })
    expect([...first.auditLog.edges, ...second.auditLog.edges].map((e) => e.node.id)).toEqual(
      auditLog.edges.map((e) => e.node.id),
    )
    expect((await operator.run(AuditLog, { actorId: operator.id, action: 'report.resolve' })).auditLog.edges).toEqual(
      [],
    )

    // An entry is a node for operators, and does not exist for anyone else.
    const id = auditLog.edges[0]!.node.id
    expect((await operator.run(AuditNode, { id })).node).toEqual({ action: 'adminMessages.read' })
    expect(codes(await alice!.try(AuditNode, { id }))).toEqual(['NOT_FOUND'])
  })

  it('writes nothing for a read that was refused', async () => {
    const operator = await newUser({ operator: true })
    const user = await newUser()
    expect(codes(await user.try(AdminMessages, { filter: {} }))).toEqual(['FORBIDDEN'])
    expect(codes(await operator.try(AdminMessages, { filter: {}, first: 101 }))).toEqual(['BAD_USER_INPUT'])
    expect((await operator.run(AuditLog, { actorId: operator.id })).auditLog.edges).toEqual([])
    expect((await operator.run(AuditLog, { actorId: user.id })).auditLog.edges).toEqual([])
  })
})
