import { describe, expect, it } from 'vitest'
import { parseId } from '../../src/domain/core/ids.ts'
import { graphql } from '../gql/index.ts'
import type { InboxOrderQuery } from '../gql/graphql.ts'
import { codes, newUsers, testApp, type TestUser } from '../support/harness.ts'
import { createGroup, LeaveConversation, OpenPrivate, sendText } from '../support/operations.ts'
import { seededRandom } from '../support/random.ts'
import { UpdateSettings } from '../support/settings.ts'

const InboxOrder = graphql(`
  query InboxOrder($first: Int, $after: String, $archived: Boolean, $type: ConversationType) {
    viewer {
      conversations(first: $first, after: $after, archived: $archived, type: $type) {
        edges {
          node {
            id
            lastActivityAt
            viewerSettings {
              pinnedAt
              archived
            }
          }
        }
        pageInfo {
          hasNextPage
          endCursor
        }
      }
    }
  }
`)

const Activity = graphql(`
  query Activity($id: ID!) {
    conversation(id: $id) {
      id
      lastActivityAt
    }
  }
`)

const CONVERSATIONS = 20
const PIN_LIMIT = 5
type Node = InboxOrderQuery['viewer']['conversations']['edges'][number]['node']
type Kind = 'GROUP' | 'PRIVATE'
/** One of the viewer's conversations as the model keeps it; `peer` is a member other than the viewer. */
type Entry = { id: string; type: Kind; peer: TestUser; pinnedAt: string | null; archived: boolean; left: boolean }

/** Every conversation of the viewer's list, `first` at a time; `between` runs after each page. */
async function walk(
  user: TestUser,
  first: number,
  archived: boolean,
  type: Kind | null,
  between: () => Promise<void> = async () => {},
): Promise<Node[]> {
  const nodes: Node[] = []
  let after: string | null = null
  for (;;) {
    const page: InboxOrderQuery = await user.run(InboxOrder, { first, after, archived, type })
    nodes.push(...page.viewer.conversations.edges.map((e) => e.node))
    if (!page.viewer.conversations.pageInfo.hasNextPage) return nodes
    after = page.viewer.conversations.pageInfo.endCursor
    await between()
  }
}

const numericId = (id: string) => parseId(id, 'Conversation')
const newestFirst = (a: [string, string], b: [string, string]) =>
  a[1] === b[1] ? numericId(b[0]) - numericId(a[0]) : a[1] < b[1] ? 1 : -1

/**
 * Viewer.conversations against a model: random scenarios in groups and private conversations of sends (the viewer's own and another member's,
 * which brings an archived conversation back), pins up to the limit, unpins, archive, leaving, and
 * activity ties; after each step, both lists at a random page size and type filter must list exactly the model's
 * conversations, pinned ones by pin time (newest first), then the rest by lastActivityAt and id. The
 * viewer is in enough conversations for the statement to try its walk of the newest conversations at
 * small page sizes and to sort its own at larger ones (decision 0150), while other test files' sends
 * move the newest conversations of the database under it.
 */
async function runScenario(seed: number) {
  const rand = seededRandom(seed)
  const [viewer, friend, other] = await newUsers(3)
  const entries: Entry[] = []
  const entry = (id: string, type: Kind, peer: TestUser): Entry => ({
    id,
    type,
    peer,
    pinnedAt: null,
    archived: false,
    left: false,
  })
  for (let i = 0; i < CONVERSATIONS; i++)
    entries.push(entry((await createGroup(friend!, [viewer!])).id, 'GROUP', friend!))
  for (const peer of [friend!, other!])
    entries.push(
      entry((await peer.run(OpenPrivate, { userId: viewer!.id })).openPrivateConversation.id, 'PRIVATE', peer),
    )
  const current = () => entries.filter((e) => !e.left)

  /** The model's list: its members, pinned first by pin time, then by activity as each conversation reports it. */
  const expected = async (archived: boolean, type: Kind | null = null): Promise<string[]> => {
    const listed = current().filter((e) => e.archived === archived && (type === null || e.type === type))
    const keyed = async (es: Entry[]) =>
      Promise.all(
        es.map(
          async (e) =>
            [e.id, (await viewer!.run(Activity, { id: e.id })).conversation!.lastActivityAt] as [string, string],
        ),
      )
    const pinned = listed.filter((e) => e.pinnedAt).map((e) => [e.id, e.pinnedAt!] as [string, string])
    const rest = await keyed(listed.filter((e) => !e.pinnedAt))
    return [...pinned.sort(newestFirst), ...rest.sort(newestFirst)].map(([id]) => id)
  }
  const check = async (step: string) => {
    for (const archived of [false, true]) {
      const first = rand.pick([1, 2, 3, 5, 50])!
      const type = rand.pick([null, null, 'GROUP', 'PRIVATE'] as const)!
      const listed = await walk(viewer!, first, archived, type)
      expect(
        listed.map((n) => n.id),
        `${step}, archived ${archived}, type ${type}, pages of ${first}`,
      ).toEqual(await expected(archived, type))
      for (const n of listed) expect(n.viewerSettings.pinnedAt).toBe(entries.find((e) => e.id === n.id)!.pinnedAt)
    }
  }

  for (let step = 0; step < 25; step++) {
    const e = rand.pick(current())!
    const op = rand.int(7)
    if (op === 0) {
      await sendText(e.peer, e.id, 'from the peer')
      e.archived = false // someone else's message alerts the viewer (no do-not-disturb here) and brings it back
    } else if (op === 1) {
      await sendText(viewer!, e.id, 'mine')
    } else if (op === 2) {
      const response = await viewer!.try(UpdateSettings, { id: e.id, input: { pinned: true } })
      if (!e.pinnedAt && current().filter((x) => x.pinnedAt).length >= PIN_LIMIT)
        expect(codes(response)).toEqual(['LIMIT_REACHED'])
      else e.pinnedAt = response.data!.updateConversationSettings.viewerSettings.pinnedAt
    } else if (op === 3) {
      await viewer!.run(UpdateSettings, { id: e.id, input: { pinned: false } })
      e.pinnedAt = null
    } else if (op === 4) {
      e.archived = !e.archived
      await viewer!.run(UpdateSettings, { id: e.id, input: { archived: e.archived } })
    } else if (op === 5 && e.type === 'GROUP' && current().length > CONVERSATIONS - 3) {
      await viewer!.run(LeaveConversation, { conversationId: e.id })
      e.left = true
      e.pinnedAt = null // leaving drops the pin there
    } else {
      // Activity ties: several conversations at one instant, ordered by id among themselves.
      const tied = rand.subset(current(), 0.3).map((x) => numericId(x.id))
      await testApp().db
        .$executeRaw`UPDATE conversations SET last_activity_at = now() WHERE id = ANY(${tied.map(BigInt)}::bigint[])`
    }
    await check(`step ${step} (op ${op})`)
  }

  // Paging while others send: a conversation is listed at most once, and every one that did not
  // move while the viewer paged is listed, in the model's order.
  const before = await expected(false)
  const moved = new Set<string>()
  const listed = await walk(viewer!, 2, false, null, async () => {
    const e = rand.pick(current().filter((x) => !x.archived))!
    moved.add(e.id)
    await sendText(e.peer, e.id, 'while paging')
  })
  const ids = listed.map((n) => n.id)
  expect(new Set(ids).size).toBe(ids.length)
  const still = (list: string[]) => list.filter((id) => !moved.has(id))
  expect(still(ids)).toEqual(still(before))
}

describe('the conversation list against a model', () => {
  for (const seed of [1, 2, 3, 4]) {
    it(`matches the model in random scenario ${seed}`, () => runScenario(seed), 120_000)
  }
})
