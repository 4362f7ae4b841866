// Scenario 5b's baseline: a bare `ws` server, no GraphQL, that broadcasts one frame to every socket
// it holds when asked (POST /broadcast?text=…&bytes=…), in its own process. Prints its URL once listening.
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { WebSocketServer } from 'ws'

/** A graphql-ws `next` frame's shape, padded to `bytes` (the size of Parley's frame for the same message). */
const frame = (text: string, bytes: number) => {
  const bare = JSON.stringify({ id: '', type: 'next', payload: { data: { text } } })
  return JSON.stringify({ id: 'x'.repeat(Math.max(0, bytes - bare.length)), type: 'next', payload: { data: { text } } })
}

const server = http.createServer((request, response) => {
  const url = new URL(request.url!, 'http://localhost')
  const data = frame(url.searchParams.get('text') ?? '', Number(url.searchParams.get('bytes') ?? 0))
  for (const socket of sockets.clients) socket.send(data)
  response.writeHead(204).end()
})
const sockets = new WebSocketServer({ server })
server.listen(0, '127.0.0.1', () => console.log(`http://127.0.0.1:${(server.address() as AddressInfo).port}/broadcast`))
