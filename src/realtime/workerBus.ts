import type { Worker } from 'node:cluster'
import type { RealtimeEvent } from './events.ts'
import { createBus, type Realtime } from './pubsub.ts'

/** One event on the bus between the workers of one machine, as it crosses the IPC channel. */
type Relayed = { parleyBus: { topic: string; event: RealtimeEvent } }

const isRelayed = (message: unknown): message is Relayed =>
  typeof message === 'object' && message !== null && 'parleyBus' in message

/**
 * A worker's bus when WORKERS > 1 and there is no Redis: each publish goes to the primary, which hands
 * it to every worker, this one included, so there is one delivery path and one order, as through
 * Redis. A channel that is gone (the primary ended) loses the event; feeds read gaps from the database.
 */
export function createWorkerRealtime(opts: { subscriberBuffer?: number } = {}): Realtime {
  const target = new EventTarget()
  const receive = (message: unknown) => {
    if (isRelayed(message))
      target.dispatchEvent(new CustomEvent(message.parleyBus.topic, { detail: message.parleyBus.event }))
  }
  process.on('message', receive)
  return createBus(target, {
    subscriberBuffer: opts.subscriberBuffer,
    publish: (topic, event) =>
      new Promise((resolve) => {
        if (!process.send || !process.connected) return resolve(false)
        process.send({ parleyBus: { topic, event } } satisfies Relayed, undefined, {}, (error) => resolve(!error))
      }),
    close: async () => void process.off('message', receive),
  })
}

/** The primary's half: a bus message from one worker goes to every worker still connected. */
export function relayToWorkers(message: unknown, workers: Iterable<Worker | undefined>): void {
  if (!isRelayed(message)) return
  for (const worker of workers) if (worker?.isConnected()) worker.send(message)
}
