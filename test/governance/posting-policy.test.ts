import { describe, expect, it } from 'vitest'
import { graphql } from '../gql/gql.ts'
import { codes, newUsers } from '../support/harness.ts'
import { createGroup, OpenPrivate, SendMessage, SetRole, sendText } from '../support/operations.ts'

const SetPostingPolicy = graphql(`
  mutation GovernanceSetPostingPolicy($conversationId: ID!, $policy: PostingPolicy!) {
    setPostingPolicy(conversationId: $conversationId, policy: $policy) {
      id
      postingPolicy
    }
  }
`)

const LastNotice = graphql(`
  query GovernanceLastNotice($id: ID!, $last: Int = 1) {
    conversation(id: $id) {
      postingPolicy
      messages(last: $last) {
        edges {
          node {
            content {
              ... on TextContent {
                text
              }
              ... on SystemContent {
                event
                text
                actor {
                  id
                }
              }
            }
          }
        }
      }
    }
  }
`)

describe('setPostingPolicy', () => {
  it('makes a group announcement-only: members are FORBIDDEN to send, the owner and admins still send, and everyone sees a NOTICE', async () => {
    const [owner, admin, member] = await newUsers(3)
    const group = await createGroup(owner!, [admin!, member!])
    await owner!.run(SetRole, { conversationId: group.id, userId: admin!.id, role: 'ADMIN' })
    const set = await admin!.run(SetPostingPolicy, { conversationId: group.id, policy: 'ADMINS' })
    expect(set.setPostingPolicy).toEqual({ id: group.id, postingPolicy: 'ADMINS' })
    const seen = await member!.run(LastNotice, { id: group.id })
    expect(seen.conversation!.postingPolicy).toBe('ADMINS')
    expect(seen.conversation!.messages.edges[0]!.node.content).toEqual({
      event: 'NOTICE',
      text: 'Only the owner and admins can post in this group now',
      actor: { id: admin!.id },
    })

    const refused = await member!.try(SendMessage, {
      input: {
        conversationId: group.id,
        clientMessageId: `refused-${Math.random()}`,
        content: { text: { text: 'hi' } },
      },
    })
    expect(codes(refused)).toEqual(['FORBIDDEN'])
    await sendText(owner!, group.id, 'announcement')
    await sendText(admin!, group.id, 'from an admin')
    const texts = (await member!.run(LastNotice, { id: group.id, last: 2 })).conversation!.messages.edges.map(
      (e) => e.node.content,
    )
    expect(texts).toEqual([{ text: 'announcement' }, { text: 'from an admin' }])

    // Open again: the member sends; setting the policy it already has writes nothing.
    await owner!.run(SetPostingPolicy, { conversationId: group.id, policy: 'EVERYONE' })
    await sendText(member!, group.id, 'back')
    await owner!.run(SetPostingPolicy, { conversationId: group.id, policy: 'EVERYONE' })
    const last = (await member!.run(LastNotice, { id: group.id, last: 2 })).conversation!.messages.edges
    expect(last.map((e) => e.node.content)).toEqual([
      { event: 'NOTICE', text: 'Everyone can post in this group again', actor: { id: owner!.id } },
      { text: 'back' },
    ])
  })

  it('is for a group’s owner and admins only', async () => {
    const [owner, member, outsider] = await newUsers(3)
    const group = await createGroup(owner!, [member!])
    const set = (user: typeof owner, conversationId: string) =>
      user!.try(SetPostingPolicy, { conversationId, policy: 'ADMINS' })
    expect(codes(await set(member, group.id))).toEqual(['FORBIDDEN'])
    expect(codes(await set(outsider, group.id))).toEqual(['NOT_FOUND'])
    const { openPrivateConversation: chat } = await owner!.run(OpenPrivate, { userId: member!.id })
    expect(codes(await set(owner, chat.id))).toEqual(['BAD_USER_INPUT'])
    expect((await member!.run(LastNotice, { id: group.id })).conversation!.postingPolicy).toBe('EVERYONE')
  })
})
