import { randomUUID } from 'node:crypto'
import type { TypedDocumentNode } from '@graphql-typed-document-node/core'
import { print } from 'graphql'
import { inject } from 'vitest'
import { signToken } from '../../src/http/auth/hs256.ts'
import { createDb, type Db } from '../../src/db/client.ts'
import type { Parley } from '../../src/app.ts'
import { createApp } from '../../src/app.ts'
import { DEFAULT_SETTINGS } from '../../src/domain/core/settings.ts'
import { createRealtime } from '../../src/realtime/pubsub.ts'
import { createParleyServer, type ParleyServer } from '../../src/http/server.ts'
import { WhoAmI } from './operations.ts'

export const AUTH_SECRET = 'test-secret-that-is-long-enough-for-hs256'

export type GraphQLResponse<T> = {
  data?: T | null
  errors?: { message: string; path?: (string | number)[]; extensions?: { code?: string } }[]
}

/** Statement log of the test process's database client, for statement-count assertions. */
export const sqlLog: string[] = []

let shared: { db: Db; app: Parley; server: ParleyServer } | undefined

/** One app per test file (worker): real PostgreSQL, in-process realtime, Yoga driven through fetch. */
export function testApp() {
  if (!shared) {
    const db = createDb(inject('databaseUrl'), { poolSize: 40, onQuery: (sql) => sqlLog.push(sql) })
    const app = createApp({ db, realtime: createRealtime(), settings: structuredClone(DEFAULT_SETTINGS) })
    shared = {
      db,
      app,
      server: createParleyServer({ app, authSecret: AUTH_SECRET, maxBodyBytes: 100_000, production: false }),
    }
  }
  return shared
}

/**
 * Counts the SQL statements `work` sends, leaving out transaction control and the token's user
 * lookup: that one runs per request only when the viewer cache's entry (5 s) has just expired,
 * which a loaded machine hits at random in the middle of a measured request.
 */
export async function countStatements(work: () => Promise<unknown>): Promise<number> {
  const before = sqlLog.length
  await work()
  return sqlLog.slice(before).filter((q) => !/^(BEGIN|COMMIT|ROLLBACK)/i.test(q.trim()) && q.trim() !== VIEWER_LOOKUP)
    .length
}

/** The statement of store/users.ts findUserByHandle, as Prisma logs it. */
const VIEWER_LOOKUP = 'SELECT id, kind, deactivated_at IS NOT NULL AS deactivated FROM users WHERE handle = $1'

/** Sends one GraphQL request over HTTP (yoga.fetch: the whole HTTP pipeline, no socket). */
export async function request<T, V>(
  token: string | null,
  document: TypedDocumentNode<T, V> | string,
  variables?: V,
  headers: Record<string, string> = {},
): Promise<GraphQLResponse<T>> {
  const response = await testApp().server.yoga.fetch('http://parley.test/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
    body: JSON.stringify({ query: typeof document === 'string' ? document : print(document), variables }),
  })
  return (await response.json()) as GraphQLResponse<T>
}

export type TestUser = {
  id: string
  handle: string
  token: string
  /** Runs an operation as this user; throws when the response has errors. */
  run<T, V>(document: TypedDocumentNode<T, V>, variables?: V): Promise<T>
  /** Runs an operation as this user and returns the raw response (for error assertions). */
  try<T, V>(document: TypedDocumentNode<T, V>, variables?: V): Promise<GraphQLResponse<T>>
}

export const uniqueHandle = (prefix = 'u') => `${prefix}-${randomUUID().slice(0, 12)}`

/** A fresh user: a minted token; the first authenticated request creates the user. */
export function newUser(opts: { prefix?: string; operator?: boolean; name?: string } = {}): Promise<TestUser> {
  return userWithHandle(uniqueHandle(opts.prefix), opts)
}

/** A user for a given handle (created on first request unless it exists); another `expiresIn` gives another token (a second device). */
export async function userWithHandle(
  handle: string,
  opts: { operator?: boolean; name?: string; expiresIn?: string } = {},
): Promise<TestUser> {
  const token = await signToken(AUTH_SECRET, handle, {
    operator: opts.operator,
    name: opts.name,
    expiresIn: opts.expiresIn,
  })
  const user: TestUser = {
    id: '',
    handle,
    token,
    try: (document, variables) => request(token, document, variables),
    async run(document, variables) {
      const response = await request(token, document, variables)
      if (response.errors?.length) throw new Error(`GraphQL errors: ${JSON.stringify(response.errors)}`)
      return response.data!
    },
  }
  const me = await request(token, WhoAmI)
  user.id = me.data!.viewer.user.id
  return user
}

export const newUsers = (n: number, prefix?: string) =>
  Promise.all(Array.from({ length: n }, () => newUser({ prefix })))

/** The error codes of a response, in order. */
export const codes = (response: GraphQLResponse<unknown>) => (response.errors ?? []).map((e) => e.extensions?.code)
