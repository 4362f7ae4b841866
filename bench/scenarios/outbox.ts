import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { median } from '../measure.ts'
import type { Figure } from '../support.ts'

/** What the outbox scenarios (webhooks, push) measure against: a loopback receiver that answers at once. */
export type LoopbackReceiver = {
  url: string
  /** Forgets what was received. */
  reset(): void
  /** The bodies of the requests that brought something, in the order they came. */
  bodies(): string[]
  /** Resolves once `count` units (deliveries, notifications) came since the last reset. */
  received(count: number): Promise<void>
  close(): Promise<void>
}

/**
 * Starts a receiver on 127.0.0.1 at `path`; `take` reads each request and says what to answer and
 * how many units it brought (0: a repeat, not kept).
 */
export async function startLoopbackReceiver(
  path: string,
  take: (body: string, req: IncomingMessage) => { status: number; answer?: string; units: number },
): Promise<LoopbackReceiver> {
  let bodies: string[] = []
  let units = 0
  let waiting: { count: number; resolve(): void } | null = null
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString()
      const taken = take(body, req)
      res.writeHead(taken.status, taken.answer ? { 'content-type': 'application/json' } : {}).end(taken.answer)
      if (!taken.units) return
      bodies.push(body)
      units += taken.units
      if (waiting && units >= waiting.count) waiting.resolve()
    })
  })
  const port = await new Promise<number>((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)),
  )
  return {
    url: `http://127.0.0.1:${port}${path}`,
    reset() {
      bodies = []
      units = 0
    },
    bodies: () => bodies,
    received: (count) =>
      new Promise<void>((resolve) => {
        waiting = { count, resolve }
        if (units >= count) resolve()
      }),
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  }
}

/** A lone sender's p50 with the outbox at work against without it (target ≤ 1.2×). */
export function loneSenderFigure(scenario: string, on: number[], off: number[], offLabel: string): Figure {
  const [lone, bare] = [median(on), median(off)]
  return {
    scenario,
    metric: 'p50 ms',
    value: lone.toFixed(2),
    baseline: `${bare.toFixed(2)} (${offLabel})`,
    ratio: lone / bare,
    target: '≤ 1.2',
    met: lone / bare <= 1.2,
  }
}
