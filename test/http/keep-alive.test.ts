import { connect, type Socket } from 'node:net'
import { once } from 'node:events'
import { setTimeout as sleep } from 'node:timers/promises'
import { describe, expect, it } from 'vitest'
import { spawnInstance } from '../support/server.ts'

/** Writes a keep-alive GET /healthz on `socket` and resolves with the response's status line. */
async function healthz(socket: Socket): Promise<string> {
  socket.write('GET /healthz HTTP/1.1\r\nHost: parley\r\n\r\n')
  const [chunk] = (await once(socket, 'data')) as [Buffer]
  return chunk.toString('latin1').split('\r\n')[0]!
}

describe('HTTP keep-alive (HTTP_KEEP_ALIVE_MS)', () => {
  it('keeps an idle connection open for the configured time, then closes it', async () => {
    const instance = await spawnInstance({ HTTP_KEEP_ALIVE_MS: '1000' })
    try {
      const { hostname, port } = new URL(instance.url)
      const socket = connect(Number(port), hostname)
      await once(socket, 'connect')
      const closed = once(socket, 'close').then(() => performance.now())
      expect(await healthz(socket)).toBe('HTTP/1.1 200 OK')
      await sleep(500)
      // Still open: a second request on the same connection.
      expect(await healthz(socket)).toBe('HTTP/1.1 200 OK')
      const idleFrom = performance.now()
      // Not closed within 5 s (Node's own default, or the 65 s one) is a failure, not a wait.
      const closedAt = await Promise.race([closed, sleep(5_000).then(() => Number.POSITIVE_INFINITY)])
      expect(closedAt - idleFrom).toBeGreaterThan(800)
      expect(closedAt - idleFrom).toBeLessThan(5_000)
    } finally {
      instance.child.kill('SIGTERM')
      await instance.exited
    }
  })
})
