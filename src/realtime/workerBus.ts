import type { Worker } from 'node:cluster'
import type { RealtimeEvent } from './events.ts'
import { createBus, type Realtime } from './pubsub.ts'
import type { StreamStates } from './streams.ts'

/** One event on the bus between the workers of one machine, as it crosses the IPC channel. */
type Relayed = { parleyBus: { topic: string; event: RealtimeEvent } }
/** A worker's call on the stream states the primary holds, and the answer. */
type StreamCall = { parleyStreams: { id: number; op: keyof StreamStates; args: unknown[] } }
type StreamAnswer = { parleyStreamsAnswer: { id: number; result: unknown } }

const has = <K extends string>(message: unknown, key: K): message is Record<K, unknown> =>
  typeof message === 'object' && message !== null && key in message
const isRelayed = (message: unknown): message is Relayed => has(message, 'parleyBus')
const isStreamCall = (message: unknown): message is StreamCall => has(message, 'parleyStreams')
const isStreamAnswer = (message: unknown): message is StreamAnswer => has(message, 'parleyStreamsAnswer')

/**
 * Stream states held by the primary, as Redis holds them for several machines: a stream's appends
 * may reach any worker (each new connection goes to the next), and each worker's idle sweeper must
 * see the live text another worker took. A channel that is gone (the primary ended) rejects.
 */
function primaryStreamStates(): StreamStates {
  const waiting = new Map<number, (result: unknown) => void>()
  let nextId = 0
  process.on('message', (message: unknown) => {
    if (!isStreamAnswer(message)) return
    waiting.get(message.parleyStreamsAnswer.id)?.(message.parleyStreamsAnswer.result)
    waiting.delete(message.parleyStreamsAnswer.id)
  })
  const call =
    (op: keyof StreamStates) =>
    (...args: unknown[]): Promise<never> =>
      new Promise((resolve, reject) => {
        if (!process.send || !process.connected) return reject(new Error('the primary process is gone'))
        const id = nextId++
        waiting.set(id, resolve as (result: unknown) => void)
        process.send({ parleyStreams: { id, op, args } } satisfies StreamCall, undefined, {}, (error) => {
          if (!error) return
          waiting.delete(id)
          reject(error)
        })
      })
  return { open: call('open'), append: call('append'), peek: call('peek'), close: call('close') }
}

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
    streams: primaryStreamStates(),
    publish: (topic, event) =>
      new Promise((resolve) => {
        if (!process.send || !process.connected) return resolve(false)
        process.send({ parleyBus: { topic, event } } satisfies Relayed, undefined, {}, (error) => resolve(!error))
      }),
    close: async () => void process.off('message', receive),
  })
}

/**
 * The primary's half: a bus message from one worker goes to every worker still connected, and a
 * worker's call on the stream states is answered from the primary's own (an accepted append
 * publishes its delta to every worker before the caller hears the answer, in one order for all).
 */
export function relayBetweenWorkers(workers: () => Iterable<Worker | undefined>) {
  const relay = (message: Relayed) => {
    for (const worker of workers()) if (worker?.isConnected()) worker.send(message)
  }
  const { streams } = createBus(new EventTarget(), {
    publish: async (topic, event) => (relay({ parleyBus: { topic, event } }), true),
  })
  return (from: Worker, message: unknown): void => {
    if (isRelayed(message)) return relay(message)
    if (!isStreamCall(message)) return
    const { id, op, args } = message.parleyStreams
    void (streams[op] as (...args: unknown[]) => Promise<unknown>)(...args).then((result) => {
      if (from.isConnected()) from.send({ parleyStreamsAnswer: { id, result } } satisfies StreamAnswer)
    })
  }
}
