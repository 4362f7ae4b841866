import type { ApolloClient } from '@apollo/client'
import { afterAll, describe, expect, it } from 'vitest'
import { newUsers } from '../support/harness.ts'
import { createGroup, sendText } from '../support/operations.ts'
import { liveServer } from '../support/server.ts'
import { reply } from '../support/threads.ts'
import { ClientThreadEvents, ClientThreadPts, ClientThreadRoot } from '../support/threadStreams.ts'
import { createApolloClient } from '../clients/apollo.ts'
import { countingFetch, failOnConsoleWarnings } from '../clients/support.ts'

const live = liveServer()
const clients: ApolloClient[] = []
afterAll(() => clients.forEach((c) => c.stop()))

failOnConsoleWarnings()

describe('Apollo Client and threads', () => {
  it('updates a root’s reply count in the cache from the reply’s MessageEvent, with no refetch', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    const root = (await sendText(alice!, group.id, 'question')).message
    await reply(alice!, group.id, root.id)
    const { fetch, requests } = countingFetch()
    const client = createApolloClient({ httpUrl: live.server.url, wsUrl: live.server.wsUrl, token: bob!.token, fetch })
    clients.push(client)
    const variables = { id: group.id, seq: root.seq }
    const initial = await client.query({ query: ClientThreadRoot, variables })
    expect(initial.data!.conversation!.message!.thread!.replyCount).toBe(1)
    const lastPts = (await alice!.run(ClientThreadPts, { id: group.id })).conversation!.lastPts
    const arrived = new Promise<void>((resolve, reject) => {
      const subscription = client
        .subscribe({ query: ClientThreadEvents, variables: { id: group.id, sincePts: lastPts } })
        .subscribe({
          next: ({ data }) => {
            const event = data?.conversationEvents
            if (!event || !('kind' in event) || !event.message.threadRoot) return
            subscription.unsubscribe()
            resolve()
          },
          error: reject,
        })
    })
    // The stream resumes from lastPts, so a reply sent while it opens still arrives.
    await reply(bob!, group.id, root.id)
    await arrived
    const cached = client.readQuery({ query: ClientThreadRoot, variables })!
    expect(cached.conversation!.message!.thread!.replyCount).toBe(2)
    expect(requests).toEqual(['ClientThreadRoot'])
  })
})
