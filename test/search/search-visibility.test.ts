import { describe, expect, it } from 'vitest'
import { graphql } from '../gql/index.ts'
import { codes, newUser, type TestUser } from '../support/harness.ts'
import { DeleteForMe, EditMessage, RecallMessage } from '../support/lifecycle.ts'
import { Search } from '../support/search.ts'
import { buildVisibilityMatrix } from '../support/visibility.ts'

const AdminSearch = graphql(`
  query AdminSearch($filter: AdminMessageFilter!, $first: Int, $after: String) {
    adminMessages(filter: $filter, first: $first, after: $after) {
      edges {
        node {
          seq
          status
        }
      }
      pageInfo {
        hasNextPage
        endCursor
      }
    }
  }
`)

const LeaveConversation = graphql(`
  mutation SearchLeave($id: ID!) {
    leaveConversation(conversationId: $id)
  }
`)

type SearchPage = {
  edges: { node: { seq: number } }[]
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; endCursor?: string | null }
}

/** Every result of a search, paged one at a time (so paging itself is checked), newest first. */
async function searchAll(user: TestUser, query: string, filter?: { conversationId?: string }): Promise<number[]> {
  const seqs: number[] = []
  let after: string | null = null
  for (;;) {
    const page: SearchPage = (await user.run(Search, { query, filter, first: 1, after })).searchMessages
    seqs.push(...page.edges.map((e) => e.node.seq))
    expect(page.pageInfo.hasPreviousPage).toBe(after !== null)
    if (!page.pageInfo.hasNextPage) return seqs
    after = page.pageInfo.endCursor!
  }
}

/** A plain reading of the matching rule for ASCII text: every query word starts some word of the text. */
const holds = (text: string, query: string) =>
  query.split(' ').every((q) => text.split(/\W+/).some((w) => w.startsWith(q)))

const QUERIES = ['carol', 'for bob', 'reply', 'bef', 'last', 'for', 'nobody']

describe('search visibility', () => {
  it('finds for each member exactly the messages the visibility matrix lets them see, newest first', async () => {
    const matrix = await buildVisibilityMatrix()
    const { alice, bob, carol, group, visible, texts } = matrix
    const outsider = await newUser()
    const expected = (seen: number[], query: string) =>
      seen.filter((seq) => texts[seq] !== undefined && holds(texts[seq], query)).reverse()

    for (const [user, seen] of [...visible, [outsider, []] as [TestUser, number[]]]) {
      for (const query of QUERIES)
        expect(await searchAll(user, query), `${user.handle} "${query}"`).toEqual(expected(seen, query))
    }
    // The conversation filter answers like the conversation itself: NOT_FOUND for one the viewer is not in.
    expect(await searchAll(carol, 'carol', { conversationId: group.id })).toEqual(
      expected(visible.get(carol)!, 'carol'),
    )
    expect(codes(await outsider.try(Search, { query: 'carol', filter: { conversationId: group.id } }))).toEqual([
      'NOT_FOUND',
    ])

    // Delete-for-me hides a message from that member's search only.
    const all = await alice.run(Search, { query: 'carol', first: 100 })
    const idOf = new Map(all.searchMessages.edges.map((e) => [e.node.seq, e.node.id]))
    await bob.run(DeleteForMe, { ids: [idOf.get(5)!] })
    expect(await searchAll(bob, 'carol')).toEqual(expected(visible.get(bob)!, 'carol').filter((s) => s !== 5))
    expect(await searchAll(carol, 'carol')).toEqual(expected(visible.get(carol)!, 'carol'))

    // A recalled message is found by nobody, and not by operators' text match either.
    const lastForBob = (await alice.run(Search, { query: 'last', first: 1 })).searchMessages.edges[0]!.node
    await alice.run(RecallMessage, { messageId: lastForBob.id })
    for (const user of [alice, bob]) expect(await searchAll(user, 'last'), user.handle).toEqual([])
    const operator = await newUser({ operator: true })
    const adminSeqs = async (text: string) =>
      (
        await operator.run(AdminSearch, { filter: { text, conversationId: group.id }, first: 100 })
      ).adminMessages.edges.map((e) => e.node.seq)
    expect(await adminSeqs('bob')).toEqual([7, 3])

    // An edit replaces the searchable text: the old words find only the forward's snapshot of it.
    await alice.run(EditMessage, { messageId: idOf.get(2)!, text: 'renamed entirely' })
    expect(await searchAll(alice, 'before')).toEqual([7])
    expect(await searchAll(alice, 'renamed')).toEqual([2])
    expect(await adminSeqs('before carol')).toEqual([7])

    // A member who left finds nothing more from the conversation.
    await carol.run(LeaveConversation, { id: group.id })
    expect(await searchAll(carol, 'carol')).toEqual([])
  })

  it('lets only operators match text across all conversations', async () => {
    const user = await newUser()
    expect(codes(await user.try(AdminSearch, { filter: { text: 'anything' } }))).toEqual(['FORBIDDEN'])
  })
})
