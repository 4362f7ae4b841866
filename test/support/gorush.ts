import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll } from 'vitest'

/** One notification as Gorush receives it. */
export type GorushNotification = {
  tokens: string[]
  platform: number
  title?: string
  message: string
  badge: number
  data: { conversationId: string; messageId: string; seq: string }
}

/**
 * A receiver speaking Gorush's HTTP API on loopback: records each POST's notifications and answers
 * {"counts", "logs", "success"} as Gorush in sync mode does, listing the tokens in `invalid` as
 * failed pushes of an unregistered token. `failing` requests from now on are answered 503, `hanging` not at all.
 */
export async function startGorush() {
  const requests: { status: number; notifications: GorushNotification[] }[] = []
  const gateway = {
    url: '',
    requests,
    invalid: new Set<string>(),
    failing: 0,
    /** Requests from now on left unanswered (the gateway hangs). */
    hanging: 0,
    /** Notifications of the requests answered 200. */
    accepted: () => requests.filter((r) => r.status === 200).flatMap((r) => r.notifications),
    /** Polls until `done` holds for the accepted notifications (30 s at most). */
    async until(done: (accepted: GorushNotification[]) => boolean, what: string): Promise<GorushNotification[]> {
      for (const deadline = Date.now() + 15_000; !done(gateway.accepted());) {
        if (Date.now() > deadline) throw new Error(`gorush: no ${what} after 30 s: ${JSON.stringify(requests)}`)
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      return gateway.accepted()
    },
    /** Waits `ms` and answers whether nothing new was accepted meanwhile. */
    async quietFor(ms: number): Promise<GorushNotification[]> {
      const before = gateway.accepted().length
      await new Promise((resolve) => setTimeout(resolve, ms))
      return gateway.accepted().slice(before)
    },
  }
  const server = createServer((req, res) => {
    let body = ''
    req.setEncoding('utf8')
    req.on('data', (chunk: string) => (body += chunk))
    req.on('end', () => {
      const { notifications } = JSON.parse(body) as { notifications: GorushNotification[] }
      if (gateway.hanging > 0) return void (gateway.hanging--, requests.push({ status: 0, notifications }))
      const status = gateway.failing > 0 ? (gateway.failing--, 503) : 200
      requests.push({ status, notifications })
      if (status !== 200) return void res.writeHead(status).end('{"message":"busy"}')
      const logs = notifications.flatMap((n) =>
        n.tokens
          .filter((t) => gateway.invalid.has(t))
          .map((token) => ({
            type: 'failed-push',
            platform: 'ios',
            token,
            message: 'Unregistered',
            error: 'Unregistered',
          })),
      )
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ counts: notifications.length, logs, success: 'ok' }))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  gateway.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/push`
  afterAll(() => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))))
  return gateway
}
