// The load generator: a separate Node process (forked by bench/client.ts) that plays the API's
// clients over HTTP and graphql-ws, so Parley's event loop serves requests and does nothing else.
import http from 'node:http'
import { createClient, type Client } from 'graphql-ws'
import WebSocket from 'ws'
import { bareJobs } from './bare-ws-client.ts'
import { latencies, throughput } from './measure.ts'

export type GraphQLCall = { token: string; query: string; variables?: Record<string, unknown> }

// node:http with keep-alive: about a third of fetch's CPU per request (0.4 against 1.2 ms here), so the load generator leaves
// more of the shared cores to Parley and PostgreSQL.
const agent = new http.Agent({ keepAlive: true })

/** POSTs one GraphQL operation; throws on GraphQL errors. */
function graphqlRequest(endpoint: string, { token, query, variables }: GraphQLCall): Promise<unknown> {
  const body = JSON.stringify({ query, variables })
  return new Promise((resolve, reject) => {
    const request = http.request(
      endpoint,
      {
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          authorization: `Bearer ${token}`,
        },
      },
      (response) => {
        const chunks: Buffer[] = []
        response.on('data', (chunk: Buffer) => chunks.push(chunk))
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString()
          let result: { data?: unknown; errors?: unknown[] }
          try {
            result = JSON.parse(text)
          } catch {
            return reject(new Error(`HTTP ${response.statusCode}, not JSON: ${text.slice(0, 200)}`))
          }
          if (result.errors?.length) reject(new Error(JSON.stringify(result.errors)))
          else resolve(result.data)
        })
        response.on('error', reject)
      },
    )
    request.on('error', reject)
    request.end(body)
  })
}

/** A graphql-ws client (one socket) authenticated with `token`. */
const connect = (wsUrl: string, token: string): Client =>
  createClient({
    url: wsUrl,
    webSocketImpl: WebSocket,
    lazy: false,
    retryAttempts: 0,
    connectionParams: { authorization: `Bearer ${token}` },
  })

/** A subscription's failure as an Error (graphql-ws may end one with a CloseEvent or a list of GraphQL errors). */
const asError = (error: unknown): Error => (error instanceof Error ? error : new Error(String(error)))

/** Hands every `next` payload of one subscription on `client` to `onEvent`. */
function subscribeOn(client: Client, call: GraphQLCall, onEvent: (data: unknown) => void): Promise<void> {
  const done = new Promise<void>((resolve, reject) => {
    client.subscribe(
      { query: call.query, variables: call.variables },
      {
        next: (r) => (r.errors ? reject(new Error(JSON.stringify(r.errors))) : onEvent(r.data)),
        error: reject,
        complete: resolve,
      },
    )
  })
  done.catch(() => {})
  return done
}

/** A socket of its own with one subscription. */
function subscribe(
  wsUrl: string,
  call: GraphQLCall,
  onEvent: (data: unknown) => void,
): { client: Client; done: Promise<void> } {
  const client = connect(wsUrl, call.token)
  return { client, done: subscribeOn(client, call, onEvent) }
}

/** Fan-out subscribers, matched to sends by the message's text. */
const fanout = {
  clients: [] as Client[],
  subscriptions: 0,
  failure: null as Error | null,
  /** The size of the last frame that carried a delivery, as graphql-ws sends it (its 36-character id). */
  frameBytes: 0,
  pending: new Map<
    string,
    { sentAt: number; left: number; received: number[]; resolve(): void; reject(error: Error): void }
  >(),
}

/** A graphql-ws client's operation id (a UUID), for the size of its frames. */
const ID = '00000000-0000-4000-8000-000000000000'

/** Subscriptions opening at once when opening many subscribers. */
const CONNECT_BATCH = 200

/** The soak's subscribers and senders (bench/soak.ts): counters only, so memory stays flat however long it runs. */
const soak = { clients: [] as Client[], events: 0, streamErrors: 0, sent: 0, sendErrors: 0 }

const jobs = {
  ...bareJobs,
  /** One call: its data. */
  async request(a: { endpoint: string; call: GraphQLCall }) {
    return graphqlRequest(a.endpoint, a.call)
  },

  /** `calls` over HTTP by `concurrency` workers: calls per second, and the first call's first response. */
  async throughput(a: { endpoint: string; concurrency: number; calls: GraphQLCall[] }) {
    return throughput(a.calls.length, a.concurrency, (i) => graphqlRequest(a.endpoint, a.calls[i]!))
  },

  /** `throughput`, also timing each call: calls per second and every call's latency in ms. */
  async load(a: { endpoint: string; concurrency: number; calls: GraphQLCall[] }) {
    const ms: number[] = []
    const perSecond = await throughput(a.calls.length, a.concurrency, async (i) => {
      const t = performance.now()
      await graphqlRequest(a.endpoint, a.calls[i]!)
      ms.push(performance.now() - t)
    })
    return { perSecond, ms }
  },

  /** The same call `count` times, one after another: each one's latency in ms. */
  async latencies(a: { endpoint: string; count: number; call: GraphQLCall }) {
    return latencies(a.count, () => graphqlRequest(a.endpoint, a.call))
  },

  /**
   * One subscription that expects `events` events: events per second until the last arrives. With
   * `batchField`, each payload carries `data[batchField].events`; otherwise a payload is one event.
   */
  async replay(a: { wsUrl: string; call: GraphQLCall; events: number; batchField?: string }) {
    const started = performance.now()
    let received = 0
    await new Promise<void>((resolve, reject) => {
      const sub = subscribe(a.wsUrl, a.call, (data) => {
        received += a.batchField ? (data as Record<string, { events: unknown[] }>)[a.batchField]!.events.length : 1
        if (received === a.events) void Promise.resolve(sub.client.dispose()).then(resolve)
      })
      sub.done.catch(reject)
    })
    return a.events / ((performance.now() - started) / 1000)
  },

  /**
   * Opens one subscription per call, `perSocket` of them (default 1) on each socket, which takes the
   * token of its first call; their MessageEvents count as deliveries of the message's text, and
   * their MessageStreamEvents (selecting `delta`) as deliveries of the delta's. Each
   * subscription's first event (the replay of a message already in the conversation) tells it is
   * live; CONNECT_BATCH subscriptions open at a time, so the server's memory is not measured at the
   * peak of thousands of subscribes at once. A subscription that fails fails the deliveries waiting for it.
   */
  async openSubscribers(a: { wsUrl: string; calls: GraphQLCall[]; perSocket?: number; noReplay?: boolean }) {
    const perSocket = a.perSocket ?? 1
    type Event = { delta?: string; message?: { content?: { text?: string } } }
    const onEvent = (data: unknown) => {
      const { conversationEvents, inboxEvents } = data as { conversationEvents?: Event; inboxEvents?: Event }
      const event = conversationEvents ?? inboxEvents
      const text = event?.message?.content?.text ?? event?.delta
      const wait = text !== undefined && fanout.pending.get(text)
      if (!wait) return
      wait.received.push(performance.now() - wait.sentAt)
      if (--wait.left === 0) {
        fanout.frameBytes = Buffer.byteLength(JSON.stringify({ id: ID, type: 'next', payload: { data } }))
        wait.resolve()
      }
    }
    const onFailure = (error: unknown) => {
      fanout.failure = asError(error)
      for (const wait of fanout.pending.values()) wait.reject(fanout.failure)
    }
    const sockets: GraphQLCall[][] = []
    for (let i = 0; i < a.calls.length; i += perSocket) sockets.push(a.calls.slice(i, i + perSocket))
    const batch = Math.max(1, Math.floor(CONNECT_BATCH / perSocket))
    for (let i = 0; i < sockets.length; i += batch) {
      await Promise.all(
        sockets.slice(i, i + batch).flatMap((calls) => {
          const client = connect(a.wsUrl, calls[0]!.token)
          fanout.clients.push(client)
          fanout.subscriptions += calls.length
          return calls.map(
            (call) =>
              new Promise<void>((live, failed) => {
                let first = true
                // With `noReplay` (inboxEvents replays nothing) the caller tells when they are live (scenarios/ejabberd.ts).
                if (a.noReplay) live()
                subscribeOn(client, call, (data) => {
                  if (first) live()
                  first = false
                  onEvent(data)
                }).catch((error: unknown) => {
                  failed(asError(error))
                  onFailure(error)
                })
              }),
          )
        }),
      )
    }
  },

  /**
   * Sends `send` (a message whose text is `text`) and waits until every open subscriber has it (or
   * `audience` of them, its conversation's): each one's delivery ms. Past `timeoutMs` it rejects.
   */
  async deliver(a: { endpoint: string; send: GraphQLCall; text: string; audience?: number; timeoutMs?: number }) {
    if (fanout.failure) throw fanout.failure
    const wait = {
      sentAt: performance.now(),
      left: a.audience ?? fanout.subscriptions,
      received: [] as number[],
      resolve: () => {},
      reject: (_error: Error) => {},
    }
    const delivered = new Promise<void>((resolve, reject) => Object.assign(wait, { resolve, reject }))
    fanout.pending.set(a.text, wait)
    const timer = a.timeoutMs && setTimeout(() => wait.reject(new Error(`not delivered: ${a.text}`)), a.timeoutMs)
    try {
      await graphqlRequest(a.endpoint, a.send)
      await delivered
    } finally {
      fanout.pending.delete(a.text)
      if (timer) clearTimeout(timer)
    }
    return wait.received
  },

  /**
   * Opens one subscription per call, counting the events they receive and the streams that fail;
   * CONNECT_BATCH sockets at a time (10,000 at once overflow the server's listen backlog).
   */
  async soakSubscribe(a: { wsUrl: string; calls: GraphQLCall[] }) {
    for (let i = 0; i < a.calls.length; i += CONNECT_BATCH)
      await Promise.all(
        a.calls.slice(i, i + CONNECT_BATCH).map((call) => {
          const sub = subscribe(a.wsUrl, call, () => void soak.events++)
          sub.done.catch(() => void soak.streamErrors++)
          soak.clients.push(sub.client)
          return Promise.race([new Promise((resolve) => sub.client.on('connected', resolve)), sub.done.catch(() => {})])
        }),
      )
  },

  /**
   * Each sender sends `rate` messages a second, round-robin over `conversationIds`, until `durationMs`
   * has passed (a refused or failed send is counted and the sender goes on).
   */
  async soakSend(a: {
    endpoint: string
    query: string
    tokens: string[]
    conversationIds: string[]
    rate: number
    durationMs: number
  }) {
    const deadline = Date.now() + a.durationMs
    await Promise.all(
      a.tokens.map(async (token, s) => {
        for (let i = 0; Date.now() < deadline; i++) {
          const next = Date.now() + 1000 / a.rate
          const variables = {
            input: {
              conversationId: a.conversationIds[(s + i) % a.conversationIds.length],
              clientMessageId: `soak-${s}-${i}`,
              content: { text: { text: `soak ${s}.${i}` } },
            },
          }
          await graphqlRequest(a.endpoint, { token, query: a.query, variables }).then(
            () => void soak.sent++,
            () => void soak.sendErrors++,
          )
          await new Promise((resolve) => setTimeout(resolve, Math.max(0, next - Date.now())))
        }
      }),
    )
  },

  async soakCounters() {
    return {
      subscriptions: soak.clients.length,
      events: soak.events,
      streamErrors: soak.streamErrors,
      sent: soak.sent,
      sendErrors: soak.sendErrors,
    }
  },

  async closeSoak() {
    await Promise.all(soak.clients.splice(0).map((c) => Promise.resolve(c.dispose())))
  },

  async frameBytes() {
    return fanout.frameBytes
  },

  async closeSubscribers() {
    fanout.subscriptions = 0
    fanout.failure = null
    await Promise.all(fanout.clients.splice(0).map((c) => Promise.resolve(c.dispose())))
  },
}

export type Jobs = typeof jobs
/** `args` crossed the process boundary untyped; LoadClient (bench/client.ts) types each job's at the caller. */
export type Request = { id: number; job: keyof Jobs; args: unknown }
export type Reply = { id: number; result?: unknown; error?: string }

// The bench process gone (finished or killed), its load generator goes too.
process.on('disconnect', () => process.exit())
process.on('message', (request: Request) => {
  const reply = (r: Omit<Reply, 'id'>) => process.send!({ id: request.id, ...r })
  const job = jobs[request.job] as (args: unknown) => Promise<unknown>
  job(request.args).then(
    (result) => reply({ result }),
    (error: unknown) => reply({ error: error instanceof Error ? (error.stack ?? error.message) : String(error) }),
  )
})
