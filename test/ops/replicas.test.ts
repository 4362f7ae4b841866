import { randomUUID } from 'node:crypto'
import type { TypedDocumentNode } from '@graphql-typed-document-node/core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApp } from '../../src/app.ts'
import { loadConfig } from '../../src/config/env.ts'
import { createDb, type Db } from '../../src/db/client.ts'
import { openReplicas, type ReplicaRouter, type ReplicaStatus } from '../../src/db/replicas.ts'
import { parseId } from '../../src/domain/core/ids.ts'
import { DEFAULT_SETTINGS } from '../../src/domain/core/settings.ts'
import { signToken } from '../../src/http/auth/hs256.ts'
import { createRealtime } from '../../src/realtime/pubsub.ts'
import { graphql } from '../gql/index.ts'
import { AUTH_SECRET } from '../support/harness.ts'
import { CreateGroup, History, SendMessage, WhoAmI } from '../support/operations.ts'
import { Inbox } from '../support/readViews.ts'
import { Search } from '../support/search.ts'
import { post, spawnInstance, startServer, type TestServer } from '../support/server.ts'
import { startReplicatedPair, type ReplicatedPair } from '../support/standby.ts'
import { Sync, SyncToken } from '../support/sync.ts'

const ReplicaReport = graphql(`
  mutation ReplicaReport($messageId: ID!, $reason: String!) {
    reportMessage(messageId: $messageId, reason: $reason)
  }
`)

const ReplicaReports = graphql(`
  query ReplicaReports {
    reports(first: 100) {
      edges {
        node {
          message {
            id
          }
        }
      }
    }
  }
`)

type User = { id: string; token: string }

/**
 * Read replicas against a real hot standby (test/support/standby.ts): a primary and a standby made
 * by pg_basebackup -R, started for this file only. Pausing the standby's replay shows which reads it
 * serves: a reader who did not write sees the old state, the writer its own write.
 */
describe('read replicas', () => {
  let pair: ReplicatedPair
  let primary: Db
  // Two instances on the same pair: one that tolerates any lag these tests make, one that skips a replica 200 ms behind.
  let patient: { replicas: ReplicaRouter; server: TestServer }
  let strict: { replicas: ReplicaRouter; server: TestServer }
  let alice: User, bob: User, operator: User
  let groupId: string

  const instance = async (maxLagMs: number) => {
    const replicas = openReplicas(primary, [pair.standbyUrl], { maxLagMs, pollMs: 20, poolSize: 8 })
    replicas.start()
    const app = createApp({
      db: primary,
      realtime: createRealtime(),
      settings: structuredClone(DEFAULT_SETTINGS),
      replicas,
    })
    return { replicas, server: await startServer(app) }
  }

  beforeAll(async () => {
    pair = await startReplicatedPair()
    primary = createDb(pair.primaryUrl, { poolSize: 16 })
    patient = await instance(600_000)
    strict = await instance(200)
    ;[alice, bob, operator] = await Promise.all([newUser(), newUser(), newUser(true)])
    groupId = (
      await run(alice, CreateGroup, {
        input: { title: 'replicated', memberIds: [bob.id], historyVisibility: 'SHARED' },
      })
    ).createGroup.id
  }, 180_000)

  afterAll(async () => {
    for (const one of [patient, strict]) {
      await one?.server.close()
      await one?.replicas.close()
    }
    await primary?.$disconnect()
    await pair?.close()
  })

  async function newUser(isOperator = false): Promise<User> {
    const token = await signToken(AUTH_SECRET, `replica-${randomUUID().slice(0, 12)}`, { operator: isOperator })
    return { token, id: (await run({ id: '', token }, WhoAmI)).viewer.user.id }
  }

  async function run<T, V>(user: User, document: TypedDocumentNode<T, V>, variables?: V, on = patient): Promise<T> {
    const response = await post(on.server.url, user.token, document, variables)
    if (response.errors?.length) throw new Error(`GraphQL errors: ${JSON.stringify(response.errors)}`)
    return response.data!
  }

  type Where = { on?: typeof patient; conversationId?: string }

  const send = async (user: User, text: string, { on = patient, conversationId = groupId }: Where = {}) =>
    (
      await run(
        user,
        SendMessage,
        { input: { conversationId, clientMessageId: randomUUID(), content: { text: { text } } } },
        on,
      )
    ).sendMessage.message

  const seqsSeenBy = async (user: User, { on = patient, conversationId = groupId }: Where = {}) =>
    (await run(user, History, { id: conversationId, last: 100 }, on)).conversation!.messages.edges.map(
      (e) => e.node.seq,
    )

  const readyz = async (on: { server: TestServer }) => {
    const response = await fetch(on.server.url.replace('/graphql', '/readyz'))
    return { status: response.status, body: (await response.json()) as { status: string; replicas?: ReplicaStatus[] } }
  }

  async function until(what: string, done: () => Promise<boolean>): Promise<void> {
    const deadline = Date.now() + 30_000
    while (!(await done())) {
      if (Date.now() > deadline) throw new Error(`gave up waiting until ${what}`)
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  }

  /** The standby has replayed everything: both instances would read every user's pages from it. */
  async function replicaCaughtUp(): Promise<void> {
    const ids = [alice, bob, operator].map((user) => parseId(user.id, 'User'))
    await until('both instances read every user from the replica', async () =>
      [patient, strict].every(({ replicas }) => ids.every((id) => replicas.readerFor(id) !== primary)),
    )
  }

  /** With replay paused: what the primary commits now is not on the replica until `resume`. */
  async function whilePaused(work: () => Promise<void>): Promise<void> {
    await replicaCaughtUp()
    await pair.pauseReplay()
    try {
      await work()
    } finally {
      await pair.resumeReplay()
    }
  }

  it('serves history, search, the inbox, sync and operators’ reads from the replica, and a writer its own writes from the primary', async () => {
    const word = `w${randomUUID().slice(0, 8)}`
    await send(alice, `first ${word}`)
    const tokenBefore = (await run(bob, SyncToken)).viewer.syncToken
    let second = { id: '', seq: 0 }
    let late = ''
    await whilePaused(async () => {
      second = await send(alice, `second ${word}`)
      // History: bob did not write, so the replica answers him, without the message.
      expect(await seqsSeenBy(bob)).not.toContain(second.seq)
      expect(await seqsSeenBy(alice)).toContain(second.seq)
      // Search.
      const found = async (user: User) => (await run(user, Search, { query: word })).searchMessages.edges.length
      expect(await found(bob)).toBe(1)
      expect(await found(alice)).toBe(2)
      // The inbox: a group alice makes now is in her list, not yet in bob's.
      late = (await run(alice, CreateGroup, { input: { title: 'late', memberIds: [bob.id] } })).createGroup.id
      const inbox = async (user: User) =>
        (await run(user, Inbox, { first: 50 })).viewer.conversations.edges.map((e) => e.node.id)
      expect(await inbox(alice)).toContain(late)
      expect(await inbox(bob)).not.toContain(late)
      // Sync: from a token the replica has passed, the replica answers (no late group yet); from one
      // taken on the primary just now, which the replica has not reached, the primary does.
      const synced = async (since: string) => (await run(bob, Sync, { since })).sync.conversations.map((c) => c.id)
      expect(await synced(tokenBefore)).not.toContain(late)
      const tokenNow = (await run(bob, SyncToken)).viewer.syncToken
      expect(await synced(tokenNow)).toEqual([])
      // Operators' reads: bob's report is not yet in the operator's list.
      await run(bob, ReplicaReport, { messageId: second.id, reason: 'replicated' })
      const reported = async () =>
        (await run(operator, ReplicaReports)).reports.edges.some((e) => e.node.message.id === second.id)
      expect(await reported()).toBe(false)
    })
    await until('the replica has replayed the paused writes', async () => (await seqsSeenBy(bob)).includes(second.seq))
    await replicaCaughtUp()
    expect((await run(bob, Sync, { since: tokenBefore })).sync.conversations.map((c) => c.id)).toContain(late)
  })

  it('a viewer who just sent sees the message on the next page: with replay paused, and racing a replica that keeps up', async () => {
    await whilePaused(async () => {
      for (let i = 0; i < 15; i++) {
        const { seq } = await send(alice, `paused ${i}`)
        expect(await seqsSeenBy(alice)).toContain(seq)
      }
      // Meanwhile a reader who sent nothing is still on the replica.
      expect(await seqsSeenBy(bob)).not.toContain(await send(alice, 'unseen by bob').then((m) => m.seq))
    })
    // Four members send into one group at once, each paging it as soon as its send is answered.
    const senders = await Promise.all([newUser(), newUser(), newUser(), newUser()])
    const [owner, ...others] = senders
    const conversationId = (
      await run(owner, CreateGroup, { input: { title: 'racers', memberIds: others.map((s) => s.id) } })
    ).createGroup.id
    await replicaCaughtUp()
    await Promise.all(
      senders.map(async (sender, n) => {
        for (let i = 0; i < 20; i++) {
          const { seq } = await send(sender, `race ${n}.${i}`, { conversationId })
          expect(await seqsSeenBy(sender, { conversationId })).toContain(seq)
        }
      }),
    )
  })

  it('skips a replica lagging beyond REPLICA_MAX_LAG_MS, for readers who did not write too, and uses it again once it catches up', async () => {
    let seq = 0
    await whilePaused(async () => {
      seq = (await send(alice, 'while lagging')).seq
      await until(
        'the strict instance reports the replica lagging',
        async () => (await readyz(strict)).body.replicas?.[0]?.state === 'lagging',
      )
      const ready = await readyz(strict)
      expect(ready.status).toBe(200)
      expect(ready.body.replicas?.[0]).toMatchObject({ state: 'lagging' })
      expect(await seqsSeenBy(bob, { on: strict })).toContain(seq)
      // The patient instance still reads bob's page from the paused replica.
      expect(await seqsSeenBy(bob, { on: patient })).not.toContain(seq)
    })
    await until(
      'the strict instance reports the replica ready',
      async () => (await readyz(strict)).body.replicas?.[0]?.state === 'ready',
    )
    expect(await seqsSeenBy(bob, { on: strict })).toContain(seq)
  })

  it('npm start takes DATABASE_REPLICA_URLS and REPLICA_MAX_LAG_MS, and its /readyz lists the replica without credentials', async () => {
    const instance = await spawnInstance({
      DATABASE_URL: pair.primaryUrl,
      DATABASE_REPLICA_URLS: ` ${pair.standbyUrl.replace('root@', 'root:secret-word@')} ,`,
      REPLICA_MAX_LAG_MS: '60000',
    })
    try {
      const started = { server: { url: instance.url } as TestServer }
      await until(
        'the started server reports its replica ready',
        async () => (await readyz(started)).body.replicas?.[0]?.state === 'ready',
      )
      const { body } = await readyz(started)
      expect(body.replicas).toHaveLength(1)
      expect(body.replicas![0]!.name).toContain(':6102/parley')
      expect(JSON.stringify(body)).not.toContain('secret-word')
      expect(instance.output()).toContain('on 1 replica(s)')
    } finally {
      instance.child.kill('SIGTERM')
      await instance.exited
    }
  })

  it('a replica stopped mid-test: reads go on from the primary, /readyz reports it down, and it is used again once back', async () => {
    await replicaCaughtUp()
    const { seq } = await send(alice, 'before the stop')
    await pair.stopStandby()
    // No poll has seen it yet: the first read on the replica fails there and is answered by the primary.
    expect(await seqsSeenBy(bob)).toContain(seq)
    expect((await run(bob, Inbox, { first: 50 })).viewer.conversations.edges.map((e) => e.node.id)).toContain(groupId)
    await until(
      '/readyz reports the replica down',
      async () => (await readyz(patient)).body.replicas?.[0]?.state === 'down',
    )
    const ready = await readyz(patient)
    expect(ready.status).toBe(200)
    expect(ready.body.replicas?.[0]?.reason).toBeTruthy()
    const after = await send(alice, 'while it is down')
    expect(await seqsSeenBy(bob)).toContain(after.seq)

    await pair.startStandby()
    await until(
      '/readyz reports the replica ready again',
      async () => (await readyz(patient)).body.replicas?.[0]?.state === 'ready',
    )
    await whilePaused(async () => {
      const unseen = await send(alice, 'after the restart')
      expect(await seqsSeenBy(bob)).not.toContain(unseen.seq)
    })
  })
})

describe('DATABASE_REPLICA_URLS and REPLICA_MAX_LAG_MS', () => {
  it('are PostgreSQL URLs separated by commas (a bad one is refused without echoing the value) and a lag of at least 40 ms', () => {
    expect(loadConfig({}).DATABASE_REPLICA_URLS).toEqual([])
    expect(loadConfig({}).REPLICA_MAX_LAG_MS).toBe(1000)
    expect(
      loadConfig({ DATABASE_REPLICA_URLS: ' postgresql://a:pw@r1/parley, postgres://r2:6432/parley ,' })
        .DATABASE_REPLICA_URLS,
    ).toEqual(['postgresql://a:pw@r1/parley', 'postgres://r2:6432/parley'])
    expect(() => loadConfig({ DATABASE_REPLICA_URLS: 'postgresql://r1/parley,http://pw@r2' })).toThrow(
      /^invalid environment: DATABASE_REPLICA_URLS must be PostgreSQL URLs separated by commas/,
    )
    expect(() => loadConfig({ DATABASE_REPLICA_URLS: 'mysql://secret@r1' })).not.toThrow(/secret/)
    expect(() => loadConfig({ REPLICA_MAX_LAG_MS: '5' })).toThrow(/REPLICA_MAX_LAG_MS="5" must be a whole number/)
  })
})
