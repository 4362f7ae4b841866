// The load client's half of scenario 5b's baseline (bench/bare-ws.ts): plain `ws` sockets, matched to
// broadcasts by the frame's text as graphql-ws subscribers are (client-process.ts's openSubscribers).
import http from 'node:http'
import WebSocket from 'ws'

const bare = {
  sockets: [] as WebSocket[],
  pending: new Map<string, { sentAt: number; left: number; received: number[]; resolve(): void }>(),
}

/** Sockets opening at once. */
const CONNECT_BATCH = 200

const post = (url: string) =>
  new Promise<void>((resolve, reject) => {
    const request = http.request(url, { method: 'POST' }, (response) => {
      response.resume()
      response.on('end', resolve)
    })
    request.on('error', reject)
    request.end()
  })

export const bareJobs = {
  /** Opens `count` sockets to the bare server; each frame's text counts as a delivery. */
  async openBare(a: { wsUrl: string; count: number }) {
    const onMessage = (raw: Buffer) => {
      const text = (JSON.parse(raw.toString()) as { payload: { data: { text: string } } }).payload.data.text
      const wait = bare.pending.get(text)
      if (!wait) return
      wait.received.push(performance.now() - wait.sentAt)
      if (--wait.left === 0) wait.resolve()
    }
    for (let i = 0; i < a.count; i += CONNECT_BATCH)
      await Promise.all(
        Array.from({ length: Math.min(CONNECT_BATCH, a.count - i) }, () => {
          const socket = new WebSocket(a.wsUrl)
          bare.sockets.push(socket)
          socket.on('message', onMessage)
          return new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject))
        }),
      )
  },

  /** Asks the bare server to broadcast `text` in a frame of `bytes`; each socket's delivery ms. */
  async deliverBare(a: { endpoint: string; text: string; bytes: number }) {
    const wait = { sentAt: performance.now(), left: bare.sockets.length, received: [] as number[], resolve: () => {} }
    const delivered = new Promise<void>((resolve) => (wait.resolve = resolve))
    bare.pending.set(a.text, wait)
    try {
      await post(`${a.endpoint}?text=${encodeURIComponent(a.text)}&bytes=${a.bytes}`)
      await delivered
    } finally {
      bare.pending.delete(a.text)
    }
    return wait.received
  },

  async closeBare() {
    await Promise.all(
      bare.sockets.splice(0).map((socket) => new Promise((resolve) => socket.once('close', resolve).terminate())),
    )
  },
}
