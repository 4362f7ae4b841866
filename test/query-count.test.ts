import { describe, expect, it } from 'vitest'
import { countStatements, newUser, newUsers } from './support/harness.ts'
import { createGroup, OpenPrivate, sendText } from './support/operations.ts'
import { Inbox } from './support/readViews.ts'

describe('statement counts', () => {
  it('are the same for an inbox page of 50 as for a page of 5 (no statement per row)', async () => {
    const viewer = await newUser()
    const others = await newUsers(5)
    // Newest first: both pages hold every kind of row (private with a peer, groups with user and system messages).
    for (let i = 0; i < 45; i++) {
      if (i % 2) await createGroup(others[i % 5]!, [viewer])
      else await sendText(others[i % 5]!, (await createGroup(viewer, [others[i % 5]!])).id, `group ${i}`)
    }
    for (const other of others) {
      const chat = (await viewer.run(OpenPrivate, { userId: other.id })).openPrivateConversation
      await sendText(other, chat.id, 'private')
      await createGroup(other, [viewer])
    }

    let fifty = 0
    await viewer.run(Inbox, { first: 5 }) // warms the token → user cache
    const small = await countStatements(async () => {
      const page = await viewer.run(Inbox, { first: 5 })
      expect(page.viewer.conversations.edges).toHaveLength(5)
    })
    await viewer.run(Inbox, { first: 50 })
    const large = await countStatements(async () => {
      const page = await viewer.run(Inbox, { first: 50 })
      fifty = page.viewer.conversations.edges.length
      expect(page.viewer.conversations.edges.every((e) => e.node.lastMessage !== null)).toBe(true)
    })
    expect(fifty).toBe(50)
    // One statement each for the page, the peers and the last messages, and at most two user batches
    // (the members' users at once, the senders when the last messages arrive; peers' rows prime the
    // user loader, so that second batch is sometimes empty). A statement per row would give 50+.
    const bound = 5
    expect(small).toBeLessThanOrEqual(bound)
    expect(large).toBeLessThanOrEqual(bound)
  })
})
