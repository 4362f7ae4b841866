import { describe, expect, it } from 'vitest'
import { codes, newUsers, request, type TestUser } from '../support/harness.ts'
import { AddMembers, createGroup, History, lastSeqOf, SendMessage } from '../support/operations.ts'
import { VisOverview } from '../support/views.ts'
import { buildVisibilityMatrix, sendAs } from '../support/visibility.ts'

type Page = {
  edges: { cursor: string; node: { seq: number } }[]
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor?: string | null; endCursor?: string | null }
}
const seqsOf = (page: Page) => page.edges.map((e) => e.node.seq)

/** Walks the whole history two at a time in one direction; checks that the walk ends exactly at both ends. */
async function walk(user: TestUser, id: string, direction: 'forward' | 'backward'): Promise<number[]> {
  const seqs: number[] = []
  let cursor: string | null = null
  for (;;) {
    const variables = direction === 'forward' ? { id, first: 2, after: cursor } : { id, last: 2, before: cursor }
    const page = (await user.run(History, variables)).conversation!.messages as Page
    if (direction === 'forward') seqs.push(...seqsOf(page))
    else seqs.unshift(...seqsOf(page))
    const more = direction === 'forward' ? page.pageInfo.hasNextPage : page.pageInfo.hasPreviousPage
    if (!more) return seqs
    cursor = (direction === 'forward' ? page.pageInfo.endCursor : page.pageInfo.startCursor)!
  }
}

/** message(seq) with its quote, and messagesAround(seq), for every seq, in one request (aliases). */
async function perSeq(user: TestUser, id: string, lastSeq: number, count: number) {
  const fields = Array.from({ length: lastSeq }, (_, i) => i + 1).map(
    (s) =>
      `m${s}: message(seq: ${s}) { seq quoted { seq } } a${s}: messagesAround(seq: ${s}, count: ${count}) { edges { node { seq } } }`,
  )
  const response = await request<{ conversation: Record<string, unknown> }, never>(
    user.token,
    `{ conversation(id: "${id}") { ${fields.join(' ')} } }`,
  )
  expect(response.errors).toBeUndefined()
  return response.data!.conversation as Record<
    string,
    { seq: number; quoted: { seq: number } | null } | { edges: { node: { seq: number } }[] } | null
  >
}

/** node(id) for every message id in one request; the hidden ones are NOT_FOUND errors at their alias. */
async function nodes(user: TestUser, ids: Map<number, string>) {
  const fields = [...ids].map(([seq, id]) => `n${seq}: node(id: "${id}") { id }`)
  const response = await request<Record<string, { id: string } | null>, never>(user.token, `{ ${fields.join(' ')} }`)
  const found = [...ids.keys()].filter((seq) => response.data?.[`n${seq}`])
  const notFound = (response.errors ?? []).map((e) =>
    e.extensions?.code === 'NOT_FOUND' ? Number(String(e.path?.[0]).slice(1)) : -1,
  )
  return { found, notFound: notFound.sort((a, b) => a - b) }
}

describe('the visibility matrix', () => {
  it('gives every member exactly what they may see on every read path (JOINED group, late member, directed messages)', async () => {
    const { alice, bob, carol, group, lastSeq, visible, quotes } = await buildVisibilityMatrix()
    expect(await lastSeqOf(alice, group.id)).toBe(lastSeq)

    // Alice sees every message, so her history names every id.
    const all = await request<
      { conversation: { messages: { edges: { node: { id: string; seq: number } }[] } } },
      never
    >(alice.token, `{ conversation(id: "${group.id}") { messages(first: 100) { edges { node { id seq } } } } }`)
    const ids = new Map(all.data!.conversation.messages.edges.map(({ node }) => [node.seq, node.id]))

    const around = 4
    for (const [user, seen] of visible) {
      const who = user.handle
      const overview = (await user.run(VisOverview, { id: group.id })).conversation!
      expect(seqsOf(overview.newest as Page), `${who} newest`).toEqual(seen)
      expect(overview.newest.pageInfo, `${who} newest pageInfo`).toEqual({ hasNextPage: false, hasPreviousPage: false })
      expect(seqsOf(overview.oldest as Page), `${who} oldest`).toEqual(seen)
      expect(overview.lastMessage?.seq, `${who} lastMessage`).toBe(seen.at(-1))
      expect(
        overview.changes.messages.map((m) => m.seq),
        `${who} changes`,
      ).toEqual(seen)
      expect(await walk(user, group.id, 'forward'), `${who} forward walk`).toEqual(seen)
      expect(await walk(user, group.id, 'backward'), `${who} backward walk`).toEqual(seen)

      const bySeq = await perSeq(user, group.id, lastSeq, around)
      for (let seq = 1; seq <= lastSeq; seq++) {
        const message = bySeq[`m${seq}`] as { seq: number; quoted: { seq: number } | null } | null
        expect(message?.seq ?? null, `${who} message(${seq})`).toBe(seen.includes(seq) ? seq : null)
        if (message && quotes[seq]) {
          expect(message.quoted?.seq ?? null, `${who} quoted of ${seq}`).toBe(
            seen.includes(quotes[seq]!) ? quotes[seq] : null,
          )
        }
        const window = [
          ...seen.filter((s) => s < seq).slice(-around / 2),
          ...seen.filter((s) => s >= seq).slice(0, around / 2),
        ]
        const got = (bySeq[`a${seq}`] as { edges: { node: { seq: number } }[] }).edges.map((e) => e.node.seq)
        expect(got, `${who} messagesAround(${seq})`).toEqual(window)
      }

      const hidden = [...ids.keys()].filter((seq) => !seen.includes(seq))
      expect(await nodes(user, ids), `${who} node(id)`).toEqual({ found: seen, notFound: hidden })
    }

    // The forward is a snapshot Bob chose to share: Carol reads it, though not its sources.
    const forward = await request<
      { conversation: { message: { content: { items: { content: { text: string } }[] } } } },
      never
    >(
      carol.token,
      `{ conversation(id: "${group.id}") { message(seq: 7) { content { ... on ForwardContent { items { content { ... on TextContent { text } } } } } } } }`,
    )
    expect(forward.data!.conversation.message.content.items.map((i) => i.content.text)).toEqual([
      'before carol',
      'for bob',
    ])

    // Forward sources and quotes go through the same rule: what the sender cannot see is NOT_FOUND, and nothing is stored.
    const attempts: [TestUser, { forward?: string[]; quoted?: string }][] = [
      [carol, { forward: [ids.get(2)!] }],
      [carol, { forward: [ids.get(5)!, ids.get(3)!] }],
      [bob, { forward: [ids.get(6)!] }],
      [carol, { quoted: ids.get(2)! }],
      [bob, { quoted: ids.get(6)! }],
    ]
    for (const [i, [user, extra]] of attempts.entries()) {
      const content = extra.forward ? { forward: { messageIds: extra.forward } } : { text: { text: 'x' } }
      const input = {
        conversationId: group.id,
        clientMessageId: `vis-attempt-${i}`,
        content,
        quotedMessageId: extra.quoted,
      }
      expect(codes(await user.try(SendMessage, { input })), `${user.handle} ${JSON.stringify(extra)}`).toEqual([
        'NOT_FOUND',
      ])
    }
    expect(await lastSeqOf(alice, group.id)).toBe(lastSeq)
  })

  it('shows a late member of a SHARED group the history from the start, except directed messages', async () => {
    const [alice, bob, carol] = (await newUsers(3)) as [TestUser, TestUser, TestUser]
    const group = await createGroup(alice, [bob], 'SHARED')
    await sendAs(alice, group.id, 'old')
    await sendAs(alice, group.id, 'for bob', { visibleTo: [bob] })
    await alice.run(AddMembers, { conversationId: group.id, userIds: [carol.id] })
    const overview = (await carol.run(VisOverview, { id: group.id })).conversation!
    expect(seqsOf(overview.oldest as Page)).toEqual([1, 2, 4])
  })
})
