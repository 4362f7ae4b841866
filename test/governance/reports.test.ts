import { describe, expect, it } from 'vitest'
import { graphql } from '../gql/gql.ts'
import { codes, newUser, newUsers } from '../support/harness.ts'
import { createGroup, SendMessage, sendText } from '../support/operations.ts'

const ReportMessage = graphql(`
  mutation GovernanceReportMessage($messageId: ID!, $reason: String!) {
    reportMessage(messageId: $messageId, reason: $reason)
  }
`)

const Reports = graphql(`
  query GovernanceReports($first: Int, $after: String, $resolved: Boolean) {
    reports(first: $first, after: $after, resolved: $resolved) {
      edges {
        node {
          id
          reason
          message {
            id
            content {
              ... on TextContent {
                text
              }
            }
          }
          reporter {
            id
          }
          resolvedAt
          resolvedBy {
            id
          }
        }
      }
      pageInfo {
        hasNextPage
        endCursor
      }
    }
  }
`)

const ResolveReport = graphql(`
  mutation GovernanceResolveReport($id: ID!) {
    resolveReport(id: $id) {
      id
      resolvedAt
      resolvedBy {
        id
      }
    }
  }
`)

const AuditActions = graphql(`
  query GovernanceAuditActions($actorId: ID) {
    auditLog(actorId: $actorId) {
      edges {
        node {
          action
          targetId
        }
      }
    }
  }
`)

/** The open reports of these messages (other tests' reports share the table). */
async function openReportsOf(operator: Awaited<ReturnType<typeof newUser>>, messageIds: string[]) {
  const { reports } = await operator.run(Reports, { first: 100 })
  return reports.edges.map((e) => e.node).filter((r) => messageIds.includes(r.message.id))
}

describe('reportMessage', () => {
  it('lets anyone who can see a message report it once while the report is open', async () => {
    const operator = await newUser({ operator: true })
    const [alice, bob, carol] = await newUsers(3)
    const group = await createGroup(alice!, [bob!, carol!])
    const message = (await sendText(alice!, group.id, 'rude words')).message
    expect((await bob!.run(ReportMessage, { messageId: message.id, reason: 'offensive' })).reportMessage).toBe(true)
    // A repeat while open changes nothing; another member's report is its own.
    expect((await bob!.run(ReportMessage, { messageId: message.id, reason: 'again' })).reportMessage).toBe(true)
    await carol!.run(ReportMessage, { messageId: message.id, reason: 'spam' })

    const open = await openReportsOf(operator, [message.id])
    expect(open.map((r) => [r.reporter.id, r.reason, r.message.content])).toEqual([
      [carol!.id, 'spam', { text: 'rude words' }],
      [bob!.id, 'offensive', { text: 'rude words' }],
    ])

    // Resolved: out of the open list, in the resolved one, audited; bob may report it again.
    const bobs = open[1]!
    const { resolveReport } = await operator.run(ResolveReport, { id: bobs.id })
    expect(resolveReport.resolvedBy).toEqual({ id: operator.id })
    expect((await openReportsOf(operator, [message.id])).map((r) => r.id)).toEqual([open[0]!.id])
    const resolved = (await operator.run(Reports, { resolved: true, first: 100 })).reports.edges.map((e) => e.node.id)
    expect(resolved).toContain(bobs.id)
    const audit = (await operator.run(AuditActions, { actorId: operator.id })).auditLog.edges.map((e) => e.node)
    expect(audit).toContainEqual({ action: 'report.resolve', targetId: bobs.id })
    await bob!.run(ReportMessage, { messageId: message.id, reason: 'still rude' })
    expect((await openReportsOf(operator, [message.id])).map((r) => r.reason)).toEqual(['still rude', 'spam'])
  })

  it('refuses what the reporter cannot see, and reasons out of range, storing nothing', async () => {
    const operator = await newUser({ operator: true })
    const [alice, bob, outsider] = await newUsers(3)
    const group = await createGroup(alice!, [bob!])
    const message = (await sendText(alice!, group.id, 'members only')).message
    const directed = (
      await alice!.run(SendMessage, {
        input: {
          conversationId: group.id,
          clientMessageId: `directed-${Math.random()}`,
          content: { text: { text: 'for alice only' } },
          visibleToUserIds: [alice!.id],
        },
      })
    ).sendMessage.message
    expect(codes(await outsider!.try(ReportMessage, { messageId: message.id, reason: 'x' }))).toEqual(['NOT_FOUND'])
    expect(codes(await bob!.try(ReportMessage, { messageId: directed.id, reason: 'x' }))).toEqual(['NOT_FOUND'])
    expect(codes(await bob!.try(ReportMessage, { messageId: message.id, reason: '   ' }))).toEqual(['BAD_USER_INPUT'])
    expect(codes(await bob!.try(ReportMessage, { messageId: message.id, reason: 'x'.repeat(501) }))).toEqual([
      'BAD_USER_INPUT',
    ])
    expect(await openReportsOf(operator, [message.id, directed.id])).toEqual([])
  })

  it('keeps reports and their resolution to operators', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    const message = (await sendText(alice!, group.id, 'hm')).message
    await bob!.run(ReportMessage, { messageId: message.id, reason: 'hm' })
    expect(codes(await alice!.try(Reports, {}))).toEqual(['FORBIDDEN'])
    const operator = await newUser({ operator: true })
    const [report] = await openReportsOf(operator, [message.id])
    expect(codes(await alice!.try(ResolveReport, { id: report!.id }))).toEqual(['FORBIDDEN'])
  })
})
