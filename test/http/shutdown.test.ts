import { once } from 'node:events'
import { get } from 'node:http'
import { connect } from 'node:net'
import { print } from 'graphql'
import { describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { newUsers, type TestUser } from '../support/harness.ts'
import { ConversationEvents } from '../support/live.ts'
import { createGroup, SendMessage } from '../support/operations.ts'
import { post, spawnInstance } from '../support/server.ts'

const GRACE_MS = 2_000

/**
 * GET /readyz on a connection of its own: fetch would reuse a pooled keep-alive socket of the
 * senders, which the draining server may be closing at that moment (ECONNRESET).
 */
function readiness(origin: string): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    get(`${origin}/readyz`, { agent: false }, (response) => {
      let text = ''
      response.setEncoding('utf8')
      response.on('data', (chunk: string) => (text += chunk))
      response.on('end', () => resolve({ status: response.statusCode!, body: JSON.parse(text) }))
    }).on('error', reject)
  })
}

/** A graphql-ws client that subscribes to a conversation and then stops reading its socket. */
async function silentSubscriber(wsUrl: string, user: TestUser, conversationId: string): Promise<WebSocket> {
  const socket = new WebSocket(wsUrl, 'graphql-transport-ws')
  await once(socket, 'open')
  socket.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${user.token}` } }))
  await once(socket, 'message')
  socket.send(
    JSON.stringify({
      id: '1',
      type: 'subscribe',
      payload: { query: print(ConversationEvents), variables: { conversationId } },
    }),
  )
  ;(socket as unknown as { _socket: NodeJS.ReadableStream })._socket.pause()
  return socket
}

describe('shutdown', () => {
  it('SIGTERM: /readyz 503 at once, silent sockets and half-sent requests cut after SHUTDOWN_GRACE_MS, every acknowledged send stored', async () => {
    const instance = await spawnInstance({ SHUTDOWN_GRACE_MS: String(GRACE_MS), RATE_LIMITS: 'off' })
    const origin = new URL(instance.url).origin
    const senders = await newUsers(4)
    const group = await createGroup(senders[0]!, senders.slice(1))
    const silent = await silentSubscriber(instance.wsUrl, senders[1]!, group.id)
    // Headers and a tenth of the body it announced, then nothing.
    const half = connect(Number(new URL(instance.url).port), '127.0.0.1')
    half.on('error', () => {})
    half.write(
      'POST /graphql HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"query":',
    )

    // Senders run until the instance refuses or is gone; each records what it was told is stored.
    const acknowledged: { sender: TestUser; clientMessageId: string; id: string }[] = []
    let n = 0
    const sending = senders.map(async (sender) => {
      for (;;) {
        const clientMessageId = `shutdown-${++n}`
        const response = await post(instance.url, sender.token, SendMessage, {
          input: { conversationId: group.id, clientMessageId, content: { text: { text: clientMessageId } } },
        }).catch(() => null)
        if (!response?.data) return response?.errors?.[0]?.extensions?.code ?? 'gone'
        acknowledged.push({ sender, clientMessageId, id: response.data.sendMessage.message.id })
      }
    })
    while (acknowledged.length < 20) await new Promise((resolve) => setTimeout(resolve, 20))

    const signalled = Date.now()
    instance.child.kill('SIGTERM')
    let ready: { status: number; body: unknown }
    do ready = await readiness(origin)
    while (ready.status === 200)
    expect([ready.status, ready.body]).toEqual([503, { status: 'stopping' }])

    expect(await instance.exited).toBe(0)
    const took = Date.now() - signalled
    // The half request and the silent socket held it to the grace period, and no longer (ws alone waits 30 s).
    expect(took).toBeGreaterThanOrEqual(GRACE_MS)
    expect(took).toBeLessThan(GRACE_MS + 8_000)
    for (const code of await Promise.all(sending)) expect(['UNAVAILABLE', 'gone']).toContain(code)
    silent.terminate()
    half.destroy()

    // Every send answered with success is stored: sent again, each is recognised as a duplicate of itself.
    expect(acknowledged.length).toBeGreaterThanOrEqual(20)
    for (const { sender, clientMessageId, id } of acknowledged) {
      const again = await sender.run(SendMessage, {
        input: { conversationId: group.id, clientMessageId, content: { text: { text: clientMessageId } } },
      })
      expect(again.sendMessage).toMatchObject({ deduplicated: true, message: { id } })
    }
  })
})
