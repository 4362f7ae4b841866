import { describe, expect, it } from 'vitest'
import { countStatements, newUsers } from '../support/harness.ts'
import { createGroup, SendMessage as QuoteSend, sendText } from '../support/operations.ts'
import { reply, RootsWithThreads } from '../support/threads.ts'

describe('thread costs', () => {
  it('a history page of 50 roots with their summaries takes as many statements as a page of 5', async () => {
    const [alice, bob, carol] = await newUsers(3)
    const group = await createGroup(alice!, [bob!, carol!])
    for (let i = 0; i < 55; i++) {
      const root = (await sendText(alice!, group.id, `root ${i}`)).message
      await reply(i % 2 ? bob! : carol!, group.id, root.id)
    }
    const page = async (last: number) => {
      await alice!.run(RootsWithThreads, { id: group.id, last }) // warms the token → user cache
      let summaries = 0
      const count = await countStatements(async () => {
        const edges = (await alice!.run(RootsWithThreads, { id: group.id, last })).conversation!.messages.edges
        expect(edges).toHaveLength(last)
        summaries = edges.filter(
          (e) => e.node.thread?.replyCount === 1 && e.node.thread.participants.length === 1,
        ).length
      })
      return { count, summaries }
    }
    const small = await page(5)
    const large = await page(50)
    expect(small.summaries).toBe(5)
    expect(large.summaries).toBe(50)
    // The conversation with its page, the summaries, and the repliers' users: not one per root.
    expect(small.count).toBeLessThanOrEqual(3)
    expect(large.count).toBe(small.count)
  })

  it('a reply takes as many statements to send as a top-level message with a quote', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    const root = (await sendText(alice!, group.id, 'root')).message
    await reply(bob!, group.id, root.id) // warms the token → user cache
    const replying = await countStatements(() => reply(bob!, group.id, root.id, { mentions: [alice!.id] }))
    const quoting = await countStatements(() =>
      bob!.run(QuoteSend, {
        input: {
          conversationId: group.id,
          clientMessageId: 'quote',
          content: { text: { text: 'quoting' } },
          quotedMessageId: root.id,
          mentionUserIds: [alice!.id],
        },
      }),
    )
    expect(replying).toBe(quoting)
  })
})
