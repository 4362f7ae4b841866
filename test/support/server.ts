import type { TypedDocumentNode } from '@graphql-typed-document-node/core'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import { print } from 'graphql'
import { createClient, type Client, type ClientOptions } from 'graphql-ws'
import type { Redis } from 'ioredis'
import { afterAll, beforeAll, inject } from 'vitest'
import WebSocket from 'ws'
import { createDb } from '../../src/db/client.ts'
import type { Parley } from '../../src/app.ts'
import { createApp } from '../../src/app.ts'
import { DEFAULT_SETTINGS, type Settings } from '../../src/domain/core/settings.ts'
import { parseId } from '../../src/domain/core/ids.ts'
import type { Logger } from '../../src/ops/logger.ts'
import { createRealtime, type EventTargetLike, type Realtime } from '../../src/realtime/pubsub.ts'
import { createRedisRealtime } from '../../src/realtime/redis.ts'
import type { PresenceRegistry } from '../../src/realtime/presence.ts'
import { createParleyServer, type ParleyServer, type ServerOptions } from '../../src/http/server.ts'
import { AUTH_SECRET, testApp, type GraphQLResponse } from './harness.ts'
import { SendMessage } from './operations.ts'

/** A started server (real HTTP and WebSocket on a free port) for subscription tests. */
export type TestServer = { app: Parley; server: ParleyServer; url: string; wsUrl: string; close(): Promise<void> }

/**
 * Starts a server on port 0 around `app` (default: the harness app, so harness mutations reach its
 * subscribers); `options` adds server options (metrics, readiness checks).
 */
export async function startServer(
  app: Parley = testApp().app,
  options: Partial<ServerOptions> = {},
): Promise<TestServer> {
  const server = createParleyServer({
    app,
    authSecret: AUTH_SECRET,
    maxBodyBytes: 100_000,
    production: false,
    ...options,
  })
  const url = await server.listen(0, '127.0.0.1')
  let closed = false
  return {
    app,
    server,
    url,
    wsUrl: url.replace(/^http/, 'ws'),
    async close() {
      if (closed) return
      closed = true
      await server.close()
    },
  }
}

/**
 * One started server for a test file: started before its tests, closed after them together with
 * every WebSocket client `connect` opened.
 */
export function liveServer(): { readonly server: TestServer; connect(token: string): Client } {
  let server: TestServer | undefined
  const clients: Client[] = []
  beforeAll(async () => {
    server = await startServer()
  })
  afterAll(async () => {
    await Promise.all(clients.map((c) => Promise.resolve(c.dispose())))
    await server?.close()
  })
  return {
    get server() {
      return server!
    },
    connect(token) {
      const client = wsClient(server!.wsUrl, token)
      clients.push(client)
      return client
    },
  }
}

/** The Redis the multi-instance tests use, when configured (CI sets TEST_REDIS_URL when Redis answers). */
export const testRedisUrl = process.env.TEST_REDIS_URL ?? process.env.REDIS_URL

/**
 * Buses for several instances in this process: Redis pub/sub when configured, else one shared
 * in-process event target (the same delivery code, without the network hop).
 */
function sharedBuses(opts: { subscriberBuffer?: number } = {}): {
  kind: 'redis' | 'memory'
  create(): Realtime
} {
  if (testRedisUrl) return { kind: 'redis', create: () => createRedisRealtime(testRedisUrl, opts) }
  const target: EventTargetLike = new EventTarget()
  return { kind: 'memory', create: () => createRealtime({ ...opts, eventTarget: target }) }
}

/**
 * An instance with its own database pool and bus, on the shared test database; `parts` overrides
 * settings, the pool (size, wait) or gives it a rate-limit store.
 */
export async function startInstance(
  realtime: Realtime,
  parts: {
    settings?: Partial<Settings>
    poolSize?: number
    poolTimeoutMs?: number
    rateLimitStore?: Redis
    log?: Logger
    presence?: PresenceRegistry
  } = {},
): Promise<TestServer> {
  const db = createDb(inject('databaseUrl'), { poolSize: parts.poolSize ?? 10, poolTimeoutMs: parts.poolTimeoutMs })
  const app = createApp({
    db,
    realtime,
    rateLimitStore: parts.rateLimitStore,
    presence: parts.presence,
    settings: { ...structuredClone(DEFAULT_SETTINGS), ...parts.settings },
  })
  const started = await startServer(app, parts.log ? { log: parts.log } : {})
  return {
    ...started,
    async close() {
      await started.close()
      await realtime.close()
      await db.$disconnect()
    },
  }
}

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

/**
 * Starts `npm start`'s entry point as its own process on the test database (with TEST_REDIS_URL's
 * Redis when set; `env` adds or overrides variables) and resolves with its URLs once it listens.
 */
export async function spawnInstance(env: NodeJS.ProcessEnv = {}) {
  const base: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: inject('databaseUrl'),
    PORT: '0',
    HOST: '127.0.0.1',
    AUTH_SECRET,
    NODE_ENV: 'test',
  }
  delete base.REDIS_URL
  if (testRedisUrl) base.REDIS_URL = testRedisUrl
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env: { ...base, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const exited = once(child, 'exit').then(([code]) => code as number)
  let output = ''
  child.stderr.on('data', (d) => (output += d))
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (d) => {
      output += d
      const match = /GraphQL[^:]*: (http:\/\/[^\s"]+)/.exec(output)
      if (match) resolve(match[1]!)
    })
    void exited.then((code) => reject(new Error(`instance exited with ${code} before listening:\n${output}`)))
  })
  return { url, wsUrl: url.replace(/^http/, 'ws'), child, exited, output: () => output }
}

/**
 * Two instances on the shared test database, their events crossing through `sharedBuses()`: started
 * before the file's tests, closed after them with every WebSocket client `connect` opened.
 * `connect` takes a server, or a function naming the URL to (re)connect to.
 */
export function twoInstances(): {
  readonly a: TestServer
  readonly b: TestServer
  connect(server: TestServer | (() => string), token: string, opts?: Parameters<typeof wsClient>[2]): Client
} {
  const buses = sharedBuses()
  let started: [TestServer, TestServer] | undefined
  const clients: Client[] = []
  beforeAll(async () => {
    started = await Promise.all([startInstance(buses.create()), startInstance(buses.create())])
  })
  afterAll(async () => {
    await Promise.all(clients.map((c) => Promise.resolve(c.dispose())))
    await Promise.all(started?.map((s) => s.close()) ?? [])
  })
  return {
    get a() {
      return started![0]
    },
    get b() {
      return started![1]
    },
    connect(server, token, opts = {}) {
      const client = wsClient(typeof server === 'function' ? server : server.wsUrl, token, opts)
      clients.push(client)
      return client
    },
  }
}

/** Sends one operation over real HTTP to a started server. */
export async function post<T, V>(
  url: string,
  token: string,
  document: TypedDocumentNode<T, V>,
  variables?: V,
): Promise<GraphQLResponse<T>> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query: print(document), variables }),
  })
  return (await response.json()) as GraphQLResponse<T>
}

let sent = 0
/** Sends a text message over real HTTP to a started server; throws on errors. */
export async function sendVia(server: { url: string }, user: { token: string }, conversationId: string, text: string) {
  const response = await post(server.url, user.token, SendMessage, {
    input: {
      conversationId,
      clientMessageId: `via-${process.pid}-${++sent}-${Math.random()}`,
      content: { text: { text } },
    },
  })
  if (response.errors) throw new Error(JSON.stringify(response.errors))
  return response.data!.sendMessage.message
}

/** A graphql-ws client (no retries unless asked; retries come at once). */
export function wsClient(
  wsUrl: string | (() => string),
  token: string,
  opts: Pick<ClientOptions, 'retryAttempts' | 'on'> = {},
): Client {
  return createClient({
    url: wsUrl,
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${token}` },
    retryAttempts: opts.retryAttempts ?? 0,
    retryWait: async () => {},
    on: opts.on ?? {},
  })
}

type Errors = NonNullable<GraphQLResponse<unknown>['errors']>

/** What one subscription received: data events, errors (in a next payload or as the error message), and the end. */
export type Received<T> = {
  events: T[]
  errors: Errors
  done: boolean
  /** Resolves once `count` events arrived (or the stream ended: then the assertion shows what came). */
  waitFor(count: number): Promise<T[]>
  /** Resolves once the events received satisfy `done` (or the stream ended). */
  waitUntil(done: (events: T[]) => boolean): Promise<T[]>
  /** Resolves once the stream ended (complete or error). */
  ended(): Promise<void>
  dispose(): void
}

const WAIT_LIMIT_MS = 15_000

function receiver<T>(): {
  received: Received<T>
  push(event: T): void
  fail(errors: Errors): void
  end(): void
  onDispose(f: () => void): void
} {
  let notify: () => void = () => {}
  let dispose = () => {}
  const changed = () => new Promise<void>((resolve) => (notify = resolve))
  const until = async (done: () => boolean, what: string) => {
    const deadline = Date.now() + WAIT_LIMIT_MS
    while (!done()) {
      const wait = changed()
      const timeout = new Promise<'timeout'>((resolve) =>
        setTimeout(() => resolve('timeout'), Math.max(0, deadline - Date.now())).unref(),
      )
      if ((await Promise.race([wait, timeout])) === 'timeout')
        throw new Error(
          `gave up waiting for ${what}; received ${JSON.stringify(received.events)} errors ${JSON.stringify(received.errors)}`,
        )
    }
  }
  const received: Received<T> = {
    events: [],
    errors: [],
    done: false,
    async waitFor(count) {
      await until(() => received.events.length >= count || received.done, `${count} events`)
      return received.events
    },
    async waitUntil(done) {
      await until(() => done(received.events) || received.done, 'a condition on the events')
      return received.events
    },
    async ended() {
      await until(() => received.done, 'the end of the stream')
    },
    dispose: () => dispose(),
  }
  return {
    received,
    push(event) {
      received.events.push(event)
      notify()
    },
    fail(errors) {
      received.errors.push(...errors)
      notify()
    },
    end() {
      received.done = true
      notify()
    },
    onDispose(f) {
      dispose = f
    },
  }
}

/** Subscribes over graphql-ws and records everything that arrives. */
export function subscribeWs<T, V>(
  client: Client,
  document: TypedDocumentNode<T, V> | string,
  variables?: V,
): Received<T> {
  const r = receiver<T>()
  const unsubscribe = client.subscribe<T>(
    {
      query: typeof document === 'string' ? document : print(document),
      variables: variables as Record<string, unknown> | undefined,
    },
    {
      next: (result) => (result.errors ? r.fail(result.errors as Errors) : r.push(result.data as T)),
      error: (error) => {
        r.fail(
          Array.isArray(error)
            ? (error as Errors)
            : [{ message: String((error as { reason?: string }).reason ?? error) }],
        )
        r.end()
      },
      complete: () => r.end(),
    },
  )
  r.onDispose(unsubscribe)
  return r.received
}

/** Waits until `user` has `count` open subscriptions on the app's process (listening, resume position taken). */
export async function waitForSubscriptions(app: Parley, user: { id: string }, count: number): Promise<void> {
  const userId = parseId(user.id, 'User')
  let unwatch = () => {}
  let timer: NodeJS.Timeout | undefined
  try {
    await new Promise<void>((resolve, reject) => {
      const check = () => app.hub.stats(userId).subscriptions === count && resolve()
      // The hub reports every subscription that opens or closes.
      unwatch = app.hub.watch(check)
      timer = setTimeout(
        () => reject(new Error(`expected ${count} open subscriptions, have ${JSON.stringify(app.hub.stats(userId))}`)),
        WAIT_LIMIT_MS,
      )
      check()
    })
  } finally {
    unwatch()
    clearTimeout(timer)
  }
}

/**
 * Subscribes over Server-Sent Events (Yoga's own transport: a POST with Accept: text/event-stream)
 * and records `next` payloads until `complete` or the connection ends.
 */
export function subscribeSse<T, V>(
  url: string,
  token: string | null,
  document: TypedDocumentNode<T, V>,
  variables?: V,
): Received<T> {
  const r = receiver<T>()
  const abort = new AbortController()
  r.onDispose(() => abort.abort())
  void (async () => {
    try {
      const response = await fetch(url, {
        method: 'POST',
        signal: abort.signal,
        headers: {
          accept: 'text/event-stream',
          'content-type': 'application/json',
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
        body: JSON.stringify({ query: print(document), variables }),
      })
      const decoder = new TextDecoder()
      let buffer = ''
      for await (const chunk of response.body! as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true })
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          const message = buffer.slice(0, end)
          buffer = buffer.slice(end + 2)
          const event = /^event: (.*)$/m.exec(message)?.[1]
          const data = /^data: (.*)$/m.exec(message)?.[1]
          if (event === 'next' && data) {
            const result = JSON.parse(data) as GraphQLResponse<T>
            if (result.errors) r.fail(result.errors)
            else r.push(result.data as T)
          }
        }
      }
    } catch (error) {
      if (!abort.signal.aborted) r.fail([{ message: String(error) }])
    } finally {
      r.end()
    }
  })()
  return r.received
}
