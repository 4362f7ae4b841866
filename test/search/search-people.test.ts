import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { backfillSearchDocuments } from '../../src/domain/search/documents.ts'
import { graphql } from '../gql/index.ts'
import { codes, newUser, testApp } from '../support/harness.ts'
import { createGroup, sendText } from '../support/operations.ts'
import { Search } from '../support/search.ts'

const SearchUsers = graphql(`
  query SearchUsers($query: String!, $first: Int, $after: String) {
    searchUsers(query: $query, first: $first, after: $after) {
      edges {
        node {
          id
          handle
          displayName
        }
      }
      pageInfo {
        hasNextPage
        endCursor
      }
    }
  }
`)

const MemberSearch = graphql(`
  query MemberSearch($id: ID!, $query: String!, $first: Int) {
    conversation(id: $id) {
      memberSearch(query: $query, first: $first) {
        role
        user {
          id
          displayName
        }
      }
    }
  }
`)

const Rename = graphql(`
  mutation SearchRename($users: [UserInput!]!) {
    upsertUsers(users: $users) {
      id
      displayName
    }
  }
`)
const RemoveMember = graphql(`
  mutation SearchRemoveMember($id: ID!, $userId: ID!) {
    removeGroupMember(conversationId: $id, userId: $userId) {
      id
    }
  }
`)

/** A word no other test's user has in their name. */
const uniqueWord = () => `w${randomUUID().replace(/-/g, '').slice(0, 10)}`

describe('searchUsers and memberSearch', () => {
  it('finds people by display name (Chinese by substring, accents folded) or handle prefix, paged by display name', async () => {
    const tag = uniqueWord()
    const zhang = await newUser({ prefix: 'zhang', name: `张三丰 ${tag}` })
    const zoe = await newUser({ name: `Zoë Müller ${tag}` })
    const other = await newUser({ name: `Other Person ${tag}` })
    const found = async (query: string, first?: number, after?: string | null) =>
      (await zhang.run(SearchUsers, { query, first, after })).searchUsers
    const ids = async (query: string) => (await found(query)).edges.map((e) => e.node.id)
    expect(await ids(`${tag} 三丰`)).toEqual([zhang.id])
    expect(await ids(`${tag} 三`)).toEqual([zhang.id])
    expect(await ids(`${tag} zoe mull`)).toEqual([zoe.id])
    expect(await ids(`${tag} ${zhang.handle.slice(0, 8)}`)).toEqual([zhang.id])
    expect(await ids(`${tag} nobody`)).toEqual([])
    // By display name: "Other…", "Zoë…", "张…"; two a page.
    const page1 = await found(tag, 2)
    expect(page1.edges.map((e) => e.node.id)).toEqual([other.id, zoe.id])
    expect(page1.pageInfo.hasNextPage).toBe(true)
    const page2 = await found(tag, 2, page1.pageInfo.endCursor)
    expect(page2.edges.map((e) => e.node.id)).toEqual([zhang.id])
    expect(page2.pageInfo.hasNextPage).toBe(false)
    expect(codes(await zhang.try(SearchUsers, { query: ' ' }))).toEqual(['BAD_USER_INPUT'])
    expect(codes(await zhang.try(SearchUsers, { query: tag, after: 'bad' }))).toEqual(['BAD_USER_INPUT'])

    // A new display name is what is found from then on.
    const operator = await newUser({ operator: true })
    await operator.run(Rename, { users: [{ handle: other.handle, displayName: `Renamed ${tag}` }] })
    expect(await ids(`${tag} other`)).toEqual([])
    expect(await ids(`${tag} renamed`)).toEqual([other.id])
  })

  it('offers the @ picker only current members whose name or handle matches', async () => {
    const tag = uniqueWord()
    const owner = await newUser({ name: `Alice ${tag}` })
    const bob = await newUser({ name: `Bob ${tag}` })
    const carol = await newUser({ name: `Carol ${tag}` })
    const outsider = await newUser({ name: `Dave ${tag}` })
    const group = await createGroup(owner, [bob, carol])
    const picked = async (query: string, first?: number) =>
      (await owner.run(MemberSearch, { id: group.id, query, first })).conversation!.memberSearch.map((m) => m.user.id)
    expect(await picked(tag)).toEqual([owner.id, bob.id, carol.id])
    expect(await picked(tag, 1)).toEqual([owner.id])
    expect(await picked('car')).toEqual([carol.id])
    expect(await picked('dave')).toEqual([])
    await owner.run(RemoveMember, { id: group.id, userId: bob.id })
    expect(await picked(tag)).toEqual([owner.id, carol.id])
    expect(codes(await outsider.try(MemberSearch, { id: group.id, query: tag }))).toEqual(['NOT_FOUND'])
    expect(codes(await owner.try(MemberSearch, { id: group.id, query: '' }))).toEqual(['BAD_USER_INPUT'])
  })
})

describe('search backfill', () => {
  it('indexes messages and users written without documents (before search existed, or with indexing off)', async () => {
    const { app, db } = testApp()
    const tag = uniqueWord()
    const alice = await newUser({ name: `Alice ${tag}` })
    const group = await createGroup(alice, [])
    app.settings.searchIndexing = false
    try {
      await sendText(alice, group.id, `unindexed ${tag}`)
    } finally {
      app.settings.searchIndexing = true
    }
    await db.$executeRaw`UPDATE users SET search_document = ''::tsvector WHERE handle = ${alice.handle}`
    const messages = async () => (await alice.run(Search, { query: tag })).searchMessages.edges.length
    const users = async () => (await alice.run(SearchUsers, { query: tag })).searchUsers.edges.length
    expect([await messages(), await users()]).toEqual([0, 0])
    const done = await backfillSearchDocuments(db)
    expect(done.messages).toBeGreaterThanOrEqual(1)
    expect([await messages(), await users()]).toEqual([1, 1])
    // Idempotent: a second run finds this message indexed.
    await backfillSearchDocuments(db)
    expect(await messages()).toBe(1)
  })
})
