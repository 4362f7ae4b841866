import type { Client } from '@urql/core'
import { pipe, subscribe } from 'wonka'
import { describe, expect, it } from 'vitest'
import { newUsers, type TestUser } from '../support/harness.ts'
import { createGroup, sendText } from '../support/operations.ts'
import { liveServer } from '../support/server.ts'
import { countingFetch, failOnConsoleWarnings } from './support.ts'
import { ChatScreen, ClientEdit, ClientEvents, ClientMarkRead, ClientRecall, ClientSend } from './operations.ts'
import { createUrqlClient } from './urql.ts'

const live = liveServer()

failOnConsoleWarnings()

function urql(user: TestUser) {
  const { fetch: counting, requests } = countingFetch()
  return {
    client: createUrqlClient({
      httpUrl: live.server.url,
      wsUrl: live.server.wsUrl,
      token: user.token,
      fetch: counting,
    }),
    requests,
  }
}

type Screen = NonNullable<Awaited<ReturnType<typeof readScreen>>>
async function readScreen(client: Client, id: string, count: number, before?: string | null) {
  const result = await client.query(ChatScreen, { id, count, before }, { requestPolicy: 'cache-first' }).toPromise()
  if (result.error) throw result.error
  return result.data!.conversation!
}
const cachedScreen = (client: Client, id: string, count: number) =>
  client.readQuery(ChatScreen, { id, count })!.data!.conversation!
const seqs = (screen: Screen) => screen.messages.edges.map((e) => e.node.seq)

describe('urql with Graphcache (relayPagination)', () => {
  it('pages back twice into one ascending list', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    for (let i = 0; i < 6; i++) await sendText(alice!, group.id, `m${i}`)
    const { client } = urql(bob!)
    expect(seqs(await readScreen(client, group.id, 3))).toEqual([5, 6, 7])
    for (const oldest of [3, 1]) {
      await readScreen(client, group.id, 2, cachedScreen(client, group.id, 3).messages.pageInfo.startCursor)
      expect(seqs(cachedScreen(client, group.id, 3))[0]).toBe(oldest)
    }
    expect(seqs(cachedScreen(client, group.id, 3))).toEqual([1, 2, 3, 4, 5, 6, 7])
  })

  it('updates the cache in place after markConversationRead, editMessage, recallMessage and sendMessage, with no refetch', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    const sent = [await sendText(alice!, group.id, 'one'), await sendText(alice!, group.id, 'two')]
    const reader = urql(bob!)
    expect((await readScreen(reader.client, group.id, 10)).unreadCount).toBe(2)
    await reader.client.mutation(ClientMarkRead, { id: group.id }).toPromise()
    expect(cachedScreen(reader.client, group.id, 10)).toMatchObject({
      unreadCount: 0,
      viewerMember: { lastReadSeq: 3 },
    })

    const writer = urql(alice!)
    await readScreen(writer.client, group.id, 10)
    await writer.client.mutation(ClientEdit, { id: sent[0]!.message.id, text: 'one, edited' }).toPromise()
    await writer.client.mutation(ClientRecall, { id: sent[1]!.message.id }).toPromise()
    await writer.client
      .mutation(ClientSend, {
        input: { conversationId: group.id, clientMessageId: 'urql-send', content: { text: { text: 'three' } } },
      })
      .toPromise()
    const own = cachedScreen(writer.client, group.id, 10).messages.edges.map((e) => e.node)
    expect(
      own.slice(1).map((m) => [m.seq, m.status, m.content && 'text' in m.content ? m.content.text : null]),
    ).toEqual([
      [2, 'EDITED', 'one, edited'],
      [3, 'RECALLED', null],
      [4, 'NORMAL', 'three'],
    ])
    expect(reader.requests).toEqual(['ClientChatScreen', 'ClientMarkRead'])
    expect(writer.requests).toEqual(['ClientChatScreen', 'ClientEdit', 'ClientRecall', 'ClientSend'])
  })

  it('appends a MessageEvent from a graphql-ws subscription to the cached history', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    const { client, requests } = urql(bob!)
    const before = seqs(await readScreen(client, group.id, 10))
    const arrived = new Promise<void>((resolve) => {
      const { unsubscribe } = pipe(
        client.subscription(ClientEvents, { id: group.id, sincePts: group.lastPts }),
        subscribe((result) => {
          const event = result.data?.conversationEvents
          if (event && 'kind' in event && event.kind === 'ADDED') {
            unsubscribe()
            resolve()
          }
        }),
      )
    })
    const sent = await sendText(alice!, group.id, 'live')
    await arrived
    const after = cachedScreen(client, group.id, 10)
    expect(seqs(after)).toEqual([...before, sent.message.seq])
    expect(after.messages.edges.at(-1)!.node.content).toMatchObject({ text: 'live' })
    expect(requests).toEqual(['ClientChatScreen'])
  })
})
