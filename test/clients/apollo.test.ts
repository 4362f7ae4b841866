import type { ApolloClient } from '@apollo/client'
import { afterAll, describe, expect, it } from 'vitest'
import { newUsers, type TestUser } from '../support/harness.ts'
import { createGroup, sendText } from '../support/operations.ts'
import { liveServer } from '../support/server.ts'
import { countingFetch, failOnConsoleWarnings } from './support.ts'
import { appendMessageEdge, createApolloClient } from './apollo.ts'
import { ChatScreen, ClientEdit, ClientEvents, ClientMarkRead, ClientRecall, ClientSend } from './operations.ts'

const live = liveServer()
const clients: ApolloClient[] = []
afterAll(() => clients.forEach((c) => c.stop()))

failOnConsoleWarnings()

/** An Apollo client for `user` that counts the HTTP requests it makes. */
function apollo(user: TestUser) {
  const { fetch: counting, requests } = countingFetch()
  const client = createApolloClient({
    httpUrl: live.server.url,
    wsUrl: live.server.wsUrl,
    token: user.token,
    fetch: counting,
  })
  clients.push(client)
  return { client, requests }
}

const seqs = (data: { conversation?: { messages: { edges: { node: { seq: number } }[] } } | null }) =>
  data.conversation!.messages.edges.map((e) => e.node.seq)

describe('Apollo Client (InMemoryCache, relayStylePagination)', () => {
  it('pages back twice into one ascending list', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    for (let i = 0; i < 6; i++) await sendText(alice!, group.id, `m${i}`)
    const { client } = apollo(bob!)
    const variables = { id: group.id, count: 3 }
    const screen = client.watchQuery({ query: ChatScreen, variables })
    const watching = screen.subscribe(() => {})
    const cached = () => client.readQuery({ query: ChatScreen, variables })!
    await client.query({ query: ChatScreen, variables })
    expect(seqs(cached())).toEqual([5, 6, 7])
    for (const oldest of [3, 1]) {
      await screen.fetchMore({ variables: { count: 2, before: cached().conversation!.messages.pageInfo.startCursor } })
      expect(seqs(cached())[0]).toBe(oldest)
    }
    watching.unsubscribe()
    const all = cached()
    expect(seqs(all)).toEqual([1, 2, 3, 4, 5, 6, 7])
    expect(all.conversation!.messages.pageInfo.hasPreviousPage).toBe(false)
  })

  it('updates the cache in place after markConversationRead, editMessage, recallMessage and sendMessage, with no refetch', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    const sent = [await sendText(alice!, group.id, 'one'), await sendText(alice!, group.id, 'two')]
    const reader = apollo(bob!)
    const screen = reader.client.watchQuery({ query: ChatScreen, variables: { id: group.id, count: 10 } })
    const cached = () =>
      reader.client.readQuery({ query: ChatScreen, variables: { id: group.id, count: 10 } })!.conversation!
    await reader.client.query({ query: ChatScreen, variables: { id: group.id, count: 10 } })
    const subscription = screen.subscribe(() => {})
    expect(cached().unreadCount).toBe(2)

    await reader.client.mutate({ mutation: ClientMarkRead, variables: { id: group.id } })
    expect(cached()).toMatchObject({ unreadCount: 0, viewerMember: { lastReadSeq: 3 } })

    const writer = apollo(alice!)
    await writer.client.query({ query: ChatScreen, variables: { id: group.id, count: 10 } })
    const own = () =>
      writer.client
        .readQuery({ query: ChatScreen, variables: { id: group.id, count: 10 } })!
        .conversation!.messages.edges.map((e) => e.node)
    await writer.client.mutate({ mutation: ClientEdit, variables: { id: sent[0]!.message.id, text: 'one, edited' } })
    await writer.client.mutate({ mutation: ClientRecall, variables: { id: sent[1]!.message.id } })
    await writer.client.mutate({
      mutation: ClientSend,
      variables: {
        input: { conversationId: group.id, clientMessageId: 'apollo-send', content: { text: { text: 'three' } } },
      },
      update: (_cache, { data }) => appendMessageEdge(writer.client, group.id, data!.sendMessage.edge),
    })
    expect(
      own()
        .slice(1)
        .map((m) => [m.seq, m.status, m.content && 'text' in m.content ? m.content.text : null]),
    ).toEqual([
      [2, 'EDITED', 'one, edited'],
      [3, 'RECALLED', null],
      [4, 'NORMAL', 'three'],
    ])
    expect(reader.requests).toEqual(['ClientChatScreen', 'ClientMarkRead'])
    expect(writer.requests).toEqual(['ClientChatScreen', 'ClientEdit', 'ClientRecall', 'ClientSend'])
    subscription.unsubscribe()
  })

  it('appends a MessageEvent from a graphql-ws subscription to the cached history', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    const { client, requests } = apollo(bob!)
    const initial = await client.query({ query: ChatScreen, variables: { id: group.id, count: 10 } })
    const arrived = new Promise<void>((resolve, reject) => {
      const subscription = client
        .subscribe({ query: ClientEvents, variables: { id: group.id, sincePts: group.lastPts } })
        .subscribe({
          next: ({ data }) => {
            const event = data?.conversationEvents
            if (!event || !('kind' in event) || event.kind !== 'ADDED') return
            appendMessageEdge(client, group.id, { cursor: event.cursor, node: event.message })
            subscription.unsubscribe()
            resolve()
          },
          error: reject,
        })
    })
    const sent = await sendText(alice!, group.id, 'live')
    await arrived
    const after = client.readQuery({ query: ChatScreen, variables: { id: group.id, count: 10 } })!
    expect(seqs(after)).toEqual([...seqs(initial.data!), sent.message.seq])
    expect(after.conversation!.messages.edges.at(-1)!.node.content).toEqual({ __typename: 'TextContent', text: 'live' })
    expect(requests).toEqual(['ClientChatScreen'])
  })
})
