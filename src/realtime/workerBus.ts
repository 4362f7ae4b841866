import type { Worker } from 'node:cluster'
import type { RealtimeEvent } from './events.ts'
import { createLocalPresence, type PresenceRegistry } from './presence.ts'
import { createBus, type Realtime } from './pubsub.ts'
import type { StreamStates } from './streams.ts'

/** One event on the bus between the workers of one machine, as it crosses the IPC channel. */
type Relayed = { parleyBus: { topic: string; event: RealtimeEvent } }
/** Presence's calls, as the primary answers them (a Set crosses the channel as an array). */
type PresenceOp = Exclude<keyof PresenceRegistry, 'close'>
/** A worker's call on the stream states or the presence the primary holds, and the answer. */
type StreamCall = {
  parleyStreams: { id: number; op: keyof StreamStates | `presence.${PresenceOp}`; args: unknown[] }
}
type StreamAnswer = { parleyStreamsAnswer: { id: number; result: unknown } }

const has = <K extends string>(message: unknown, key: K): message is Record<K, unknown> =>
  typeof message === 'object' && message !== null && key in message
const isRelayed = (message: unknown): message is Relayed => has(message, 'parleyBus')
const isStreamCall = (message: unknown): message is StreamCall => has(message, 'parleyStreams')
const isStreamAnswer = (message: unknown): message is StreamAnswer => has(message, 'parleyStreamsAnswer')

const waiting = new Map<number, (result: unknown) => void>()
let nextId = 0
let answering = false

/** A call on what the primary holds; a channel that is gone (the primary ended) rejects. */
function callPrimary(op: StreamCall['parleyStreams']['op'], args: unknown[]): Promise<never> {
  if (!answering) {
    answering = true
    process.on('message', (message: unknown) => {
      if (!isStreamAnswer(message)) return
      waiting.get(message.parleyStreamsAnswer.id)?.(message.parleyStreamsAnswer.result)
      waiting.delete(message.parleyStreamsAnswer.id)
    })
  }
  return new Promise((resolve, reject) => {
    if (!process.send || !process.connected) return reject(new Error('the primary process is gone'))
    const id = nextId++
    waiting.set(id, resolve as (result: unknown) => void)
    process.send({ parleyStreams: { id, op, args } } satisfies StreamCall, undefined, {}, (error) => {
      if (!error) return
      waiting.delete(id)
      reject(error)
    })
  })
}

/**
 * Stream states held by the primary, as Redis holds them for several machines: a stream's appends
 * may reach any worker (each new connection goes to the next), and each worker's idle sweeper must
 * see the live text another worker took.
 */
function primaryStreamStates(): StreamStates {
  const call =
    (op: keyof StreamStates) =>
    (...args: unknown[]) =>
      callPrimary(op, args)
  return { open: call('open'), append: call('append'), peek: call('peek'), close: call('close') }
}

/** A worker's presence when WORKERS > 1 and there is no Redis: who is online on any worker, held by the primary. */
export function createWorkerPresence(): PresenceRegistry {
  const call =
    (op: PresenceOp) =>
    (...args: unknown[]) =>
      callPrimary(`presence.${op}`, args)
  return {
    arrive: call('arrive'),
    leave: call('leave'),
    onlineAmong: async (userIds) => new Set<number>(await callPrimary('presence.onlineAmong', [userIds])),
    announce: call('announce'),
    orphaned: call('orphaned'),
    // The primary forgets a worker's users when it exits.
    close: async () => {},
  }
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
 * worker's call on the stream states or presence is answered from the primary's own (an accepted
 * append publishes its delta to every worker before the caller hears the answer, in one order for
 * all). `exited` is told of each worker that ends: its users leave, and are orphans for any worker's
 * presence sweep to announce, as Redis's presence does with an instance that stops heartbeating.
 */
export function relayBetweenWorkers(workers: () => Iterable<Worker | undefined>) {
  const relay = (message: Relayed) => {
    for (const worker of workers()) if (worker?.isConnected()) worker.send(message)
  }
  const { streams } = createBus(new EventTarget(), {
    publish: async (topic, event) => (relay({ parleyBus: { topic, event } }), true),
  })
  const presence = createLocalPresence()
  /** The users each worker holds a live subscription of (its tracker arrives once and leaves once per user). */
  const held = new Map<number, Set<number>>()
  let orphans: number[] = []
  const holding = (worker: Worker) => held.get(worker.id) ?? held.set(worker.id, new Set()).get(worker.id)!
  const presenceOps: Record<PresenceOp, (worker: Worker, args: unknown[]) => Promise<unknown>> = {
    arrive: (worker, [userId]) => (holding(worker).add(userId as number), presence.arrive(userId as number)),
    leave: async (worker, [userId]) => {
      if (holding(worker).delete(userId as number)) await presence.leave(userId as number)
    },
    onlineAmong: async (_, [userIds]) => [...(await presence.onlineAmong(userIds as number[]))],
    announce: (_, [userId, online]) => presence.announce(userId as number, online as boolean),
    orphaned: async () => orphans.splice(0),
  }
  const answer = (from: Worker, message: StreamCall) => {
    const { id, op, args } = message.parleyStreams
    const result = op.startsWith('presence.')
      ? presenceOps[op.slice('presence.'.length) as PresenceOp](from, args)
      : (streams[op as keyof StreamStates] as (...args: unknown[]) => Promise<unknown>)(...args)
    void result.then((result) => {
      if (from.isConnected()) from.send({ parleyStreamsAnswer: { id, result } } satisfies StreamAnswer)
    })
  }
  return {
    message(from: Worker, message: unknown): void {
      if (isRelayed(message)) relay(message)
      else if (isStreamCall(message)) answer(from, message)
    },
    exited(worker: Worker): void {
      const users = [...holding(worker)]
      held.delete(worker.id)
      for (const userId of users) void presence.leave(userId)
      orphans = [...orphans, ...users]
    },
  }
}
