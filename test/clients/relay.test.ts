import { execFileSync } from 'node:child_process'
import { mkdirSync } from 'node:fs'
import path from 'node:path'
import {
  commitMutation,
  ConnectionHandler,
  createOperationDescriptor,
  fetchQuery,
  requestSubscription,
  type ConcreteRequest,
} from 'relay-runtime'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { newUsers, request, type TestUser } from '../support/harness.ts'
import { createGroup, sendText } from '../support/operations.ts'
import { liveServer } from '../support/server.ts'
import { createRelayEnvironment } from './relay-environment.ts'

const root = path.resolve(import.meta.dirname, '../..')
const ARTIFACTS = path.join(root, 'tmp/relay-artifacts')

/** relay-compiler compiles test/clients/relay/*.ts against schema.graphql; the test then runs what it wrote. */
let artifacts: Record<
  'chatScreenQuery' | 'chatInboxQuery' | 'chatSendMutation' | 'chatMarkReadMutation' | 'chatEventsSubscription',
  ConcreteRequest
>
beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true })
  execFileSync(path.join(root, 'node_modules/.bin/relay-compiler'), ['relay.config.json'], {
    cwd: path.join(root, 'test/clients/relay'),
    stdio: 'pipe',
  })
  const load = async (name: keyof typeof artifacts) =>
    [name, (await import(path.join(ARTIFACTS, `${name}.graphql.ts`))).default as ConcreteRequest] as const
  artifacts = Object.fromEntries(
    await Promise.all(
      (
        [
          'chatScreenQuery',
          'chatInboxQuery',
          'chatSendMutation',
          'chatMarkReadMutation',
          'chatEventsSubscription',
        ] as const
      ).map(load),
    ),
  ) as typeof artifacts
}, 60_000)

const live = liveServer()
const environments: ReturnType<typeof createRelayEnvironment>[] = []
afterAll(async () => {
  await Promise.all(environments.map((e) => Promise.resolve(e.close())))
})

function relayEnvironment(user: TestUser) {
  const created = createRelayEnvironment({ httpUrl: live.server.url, wsUrl: live.server.wsUrl, token: user.token })
  environments.push(created)
  return created.environment
}

describe('Relay', () => {
  it('compiles every screen and the server answers what relay-compiler wrote, within the query limits', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    await sendText(alice!, group.id, 'hello')
    const answers = [
      await request(bob!.token, artifacts.chatScreenQuery.params.text!, { id: group.id }),
      await request(bob!.token, artifacts.chatInboxQuery.params.text!, {}),
      await request(bob!.token, artifacts.chatMarkReadMutation.params.text!, { id: group.id }),
    ]
    for (const answer of answers) expect(answer.errors).toBeUndefined()
    expect(artifacts.chatEventsSubscription.params.operationKind).toBe('subscription')
  })

  it('appends a sent message to the @connection with @appendEdge, and markConversationRead updates unreadCount in the store', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    await sendText(bob!, group.id, 'unread for alice')
    const environment = relayEnvironment(alice!)
    const variables = { id: group.id }
    await fetchQuery(environment, artifacts.chatScreenQuery, variables).toPromise()
    const screen = () =>
      environment.lookup(createOperationDescriptor(artifacts.chatScreenQuery, variables).fragment).data as {
        conversation: { unreadCount: number; messages: { edges: { node: { __id: string } }[] } }
      }
    expect(screen().conversation.messages.edges.length).toBe(2)
    expect(screen().conversation.unreadCount).toBe(1)

    const connection = ConnectionHandler.getConnectionID(group.id, 'chatScreen_messages')
    const sent = await new Promise<{ sendMessage: { edge: { node: { __id: string } } } }>((resolve, reject) =>
      commitMutation(environment, {
        mutation: artifacts.chatSendMutation,
        variables: {
          input: { conversationId: group.id, clientMessageId: 'relay-send', content: { text: { text: 'from Relay' } } },
          connections: [connection],
        },
        onCompleted: (response, errors) =>
          errors?.length ? reject(new Error(JSON.stringify(errors))) : resolve(response as never),
        onError: reject,
      }),
    )
    const edges = screen().conversation.messages.edges
    expect(edges.length).toBe(3)
    expect(edges.at(-1)!.node.__id).toBe(sent.sendMessage.edge.node.__id)

    await new Promise((resolve, reject) =>
      commitMutation(environment, {
        mutation: artifacts.chatMarkReadMutation,
        variables,
        onCompleted: resolve,
        onError: reject,
      }),
    )
    expect(screen().conversation.unreadCount).toBe(0)
  })

  it('delivers a subscription’s MessageEvent into the store', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    const environment = relayEnvironment(bob!)
    const received = new Promise<{ conversationEvents: { kind: string; message: { __id: string } } }>(
      (resolve, reject) => {
        const subscription = requestSubscription(environment, {
          subscription: artifacts.chatEventsSubscription,
          variables: { id: group.id, sincePts: group.lastPts },
          onNext: (response) => {
            subscription.dispose()
            resolve(response as never)
          },
          onError: reject,
        })
      },
    )
    const sent = await sendText(alice!, group.id, 'live to Relay')
    const event = (await received).conversationEvents
    expect(event.kind).toBe('ADDED')
    expect(environment.getStore().getSource().get(event.message.__id)).toMatchObject({
      id: sent.message.id,
      seq: sent.message.seq,
    })
  })
})
