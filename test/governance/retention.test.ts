import { beforeAll, describe, expect, it, vi } from 'vitest'
import { startRetentionSweeper, sweepRetention } from '../../src/domain/governance/index.ts'
import { graphql } from '../gql/gql.ts'
import { tablesHolding, withDatabase } from '../support/database.ts'
import { onServer, pngOf, SendMedia, uploadFile } from '../support/files.ts'
import { codes, newUser, newUsers, testApp, type TestUser } from '../support/harness.ts'
import { AddReaction, PinMessage } from '../support/interactions.ts'
import { Changes, EditMessage, MessageBySeq, RecallMessage, SetFavorite, SetReminder } from '../support/lifecycle.ts'
import { createGroup, OpenPrivate, sendText, SetRole } from '../support/operations.ts'
import { Search } from '../support/search.ts'
import { liveServer, subscribeWs, waitForSubscriptions } from '../support/server.ts'
import { reply, ViewerThreads } from '../support/threads.ts'

const SetRetention = graphql(`
  mutation GovernanceSetRetention($conversationId: ID!, $seconds: Int) {
    setRetention(conversationId: $conversationId, seconds: $seconds) {
      id
      retentionSeconds
      retainedFromSeq
      legalHold
    }
  }
`)

const SetLegalHold = graphql(`
  mutation GovernanceSetLegalHold($conversationId: ID!, $hold: Boolean!) {
    setLegalHold(conversationId: $conversationId, hold: $hold) {
      id
      legalHold
    }
  }
`)

const RemoveMessage = graphql(`
  mutation GovernanceRemoveUnderHold($messageId: ID!, $reason: String!) {
    removeMessage(messageId: $messageId, reason: $reason) {
      status
    }
  }
`)

const Retained = graphql(`
  query GovernanceRetained($id: ID!) {
    conversation(id: $id) {
      retentionSeconds
      retainedFromSeq
      legalHold
      unreadCount
      messages(first: 100) {
        edges {
          node {
            seq
          }
        }
      }
    }
    viewer {
      favorites(first: 100) {
        edges {
          node {
            id
          }
        }
      }
    }
  }
`)

const RetentionInboxEvents = graphql(`
  subscription GovernanceRetentionInboxEvents {
    inboxEvents {
      __typename
      ... on ConversationUpdatedEvent {
        conversation {
          id
          retainedFromSeq
        }
      }
    }
  }
`)

const instance = liveServer()
beforeAll(() => {
  // Retention in seconds, so the tests can wait for messages to expire; never a server default here:
  // the sweeper would then delete other test files' messages in the shared database.
  testApp().app.settings.retention.minSeconds = 1
})

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const conversationKey = (id: string) => Number(Buffer.from(id, 'base64url').toString().split(':')[1])
const retained = async (user: TestUser, id: string) => await user.run(Retained, { id })

/** Rows of the conversation's messages before `seq` in each table that hangs off messages. */
function rowsBefore(conversationId: string, seq: number): Promise<Record<string, number>> {
  const tables = ['messages', 'message_edits', 'message_user_actions', 'message_search', 'pinned_messages'].concat([
    'message_reactions',
    'message_reaction_groups',
    'message_attachments',
    'webhook_deliveries',
  ])
  return withDatabase(async (client) => {
    const counts: Record<string, number> = {}
    for (const table of tables) {
      const { rows } = await client.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM ${table} WHERE conversation_id = $1 AND seq < $2`,
        [conversationKey(conversationId), seq],
      )
      counts[table] = rows[0]!.n
    }
    return counts
  })
}

describe('setRetention', () => {
  it("is a group owner's or an operator's, at least RETENTION_MIN_SECONDS, null for the server default", async () => {
    const operator = await newUser({ operator: true })
    const [alice, bob, carol] = await newUsers(3)
    const group = await createGroup(alice!, [bob!])
    await alice!.run(SetRole, { conversationId: group.id, userId: bob!.id, role: 'ADMIN' })
    expect(codes(await bob!.try(SetRetention, { conversationId: group.id, seconds: 86_400 }))).toEqual(['FORBIDDEN'])
    expect(codes(await carol!.try(SetRetention, { conversationId: group.id, seconds: 86_400 }))).toEqual(['NOT_FOUND'])
    testApp().app.settings.retention.minSeconds = 3600
    try {
      expect(codes(await alice!.try(SetRetention, { conversationId: group.id, seconds: 3599 }))).toEqual([
        'BAD_USER_INPUT',
      ])
    } finally {
      testApp().app.settings.retention.minSeconds = 1
    }
    const set = (await alice!.run(SetRetention, { conversationId: group.id, seconds: 3600 })).setRetention
    expect(set).toEqual({ id: group.id, retentionSeconds: 3600, retainedFromSeq: 1, legalHold: false })
    expect((await bob!.run(Retained, { id: group.id })).conversation!.retentionSeconds).toBe(3600)
    const reset = await operator.run(SetRetention, { conversationId: group.id, seconds: null })
    expect(reset.setRetention.retentionSeconds).toBeNull()

    // A private conversation has no owner: operators only.
    const chat = (await alice!.run(OpenPrivate, { userId: carol!.id })).openPrivateConversation
    expect(codes(await alice!.try(SetRetention, { conversationId: chat.id, seconds: 3600 }))).toEqual(['FORBIDDEN'])
    expect(
      (await operator.run(SetRetention, { conversationId: chat.id, seconds: 7200 })).setRetention.retentionSeconds,
    ).toBe(7200)
  })
})

describe('the retention sweeper', () => {
  it('deletes expired messages with everything hanging off them and advances retainedFromSeq; unread counts stay exact', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    const word = `expiring${Date.now()}${Math.floor(Math.random() * 1e6)}`
    const first = (await sendText(alice!, group.id, `first ${word}`)).message
    await alice!.run(EditMessage, { messageId: first.id, text: `edited ${word}` })
    await bob!.run(AddReaction, { messageId: first.id, emoji: '👍' })
    await alice!.run(PinMessage, { messageId: first.id })
    await bob!.run(SetFavorite, { messageId: first.id, favorite: true })
    await bob!.run(SetReminder, { messageId: first.id, remindAt: new Date(Date.now() + 3_600_000).toISOString() })
    const attachment = await uploadFile(alice!, instance.server.url, await pngOf(20, 20))
    await alice!.run(SendMedia, {
      input: { conversationId: group.id, clientMessageId: word, content: { image: { attachmentId: attachment.id } } },
    })
    await alice!.run(SetRetention, { conversationId: group.id, seconds: 2 })
    await sleep(2_200)
    const kept = (await sendText(alice!, group.id, 'kept')).message
    const inbox = subscribeWs(instance.connect(bob!.token), RetentionInboxEvents)
    await waitForSubscriptions(testApp().app, bob!, 1)
    const before = await retained(bob!, group.id)
    // Alice's three messages: SYSTEM notices (the group, the pin) and the edit are not counted.
    expect(before.conversation!.unreadCount).toBe(3)

    expect(await sweepRetention(testApp().app)).toBeGreaterThanOrEqual(kept.seq - 1)
    const after = await retained(bob!, group.id)
    expect(after.conversation!.retainedFromSeq).toBe(kept.seq)
    expect(after.conversation!.messages.edges.map((e) => e.node.seq)).toEqual([kept.seq])
    expect(after.conversation!.unreadCount).toBe(1)
    // Bob's devices hear of it: his inbox stream gets the conversation with its new retainedFromSeq.
    const isUpdate = (e: { inboxEvents: { __typename?: string } }) =>
      e.inboxEvents.__typename === 'ConversationUpdatedEvent'
    const updated = (await inbox.waitUntil((events) => events.some(isUpdate))).find(isUpdate)
    expect(updated!.inboxEvents).toEqual({
      __typename: 'ConversationUpdatedEvent',
      conversation: { id: group.id, retainedFromSeq: kept.seq },
    })
    expect(after.viewer.favorites.edges.map((e) => e.node.id)).not.toContain(first.id)
    expect((await bob!.run(MessageBySeq, { id: group.id, seq: first.seq })).conversation!.message).toBeNull()
    expect((await bob!.run(Search, { query: word })).searchMessages.edges).toEqual([])
    expect(await tablesHolding(word)).toEqual([])
    expect(Object.values(await rowsBefore(group.id, kept.seq)).every((n) => n === 0)).toBe(true)
    // The attachment no kept message carries is gone, for its uploader too.
    expect((await fetch(onServer(attachment.url, instance.server.url))).status).toBe(403)
    // Keeps the next test's count to its own conversation.
    await alice!.run(SetRetention, { conversationId: group.id, seconds: null })
  })

  it('on two concurrent runners racing live sends deletes each expired message once and nothing newer', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    await alice!.run(SetRetention, { conversationId: group.id, seconds: 3 })
    const expired = 300
    for (let i = 0; i < expired; i += 20)
      await Promise.all(Array.from({ length: 20 }, (_, j) => sendText(alice!, group.id, `old ${i + j}`)))
    await sleep(3_200)
    const { lastSeq } = await withDatabase(async (client) => {
      const { rows } = await client.query<{ lastSeq: number }>(
        'SELECT last_seq::int AS "lastSeq" FROM conversations WHERE id = $1',
        [conversationKey(group.id)],
      )
      return rows[0]!
    })

    const app = testApp().app
    let sending = true
    const sends = (async () => {
      const seqs: number[] = []
      while (sending) seqs.push((await sendText(alice!, group.id, 'new')).message.seq)
      return seqs
    })()
    const swept = await Promise.all([sweepRetention(app, 25), sweepRetention(app, 25)])
    sending = false
    const newSeqs = await sends
    // Nothing of this test's conversation is left to sweep, and both runners' counts add up to it
    // (other conversations of the shared database have no retention, so count nothing).
    expect(swept[0] + swept[1]).toBe(lastSeq)
    const after = (await retained(bob!, group.id)).conversation!
    expect(after.retainedFromSeq).toBe(lastSeq + 1)
    expect(newSeqs.length).toBeGreaterThan(0)
    const history = await withDatabase(async (client) => {
      const { rows } = await client.query<{ seq: number }>(
        'SELECT seq::int AS seq FROM messages WHERE conversation_id = $1 ORDER BY seq',
        [conversationKey(group.id)],
      )
      return rows.map((r) => r.seq)
    })
    expect(history).toEqual(newSeqs)
    expect(after.unreadCount).toBe(newSeqs.length)
  })
})

describe('startRetentionSweeper', () => {
  it('sweeps every RETENTION_SWEEP_INTERVAL_MS until stopped', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    await sendText(alice!, group.id, 'soon gone')
    await alice!.run(SetRetention, { conversationId: group.id, seconds: 1 })
    const app = testApp().app
    app.settings.retention.sweepIntervalMs = 100
    const sweeper = startRetentionSweeper(app, { log: (message) => expect.fail(message) })
    try {
      expect((await retained(bob!, group.id)).conversation!.retainedFromSeq).toBe(1)
      for (const deadline = Date.now() + 10_000; ; await sleep(50)) {
        const conversation = (await retained(bob!, group.id)).conversation!
        if (conversation.messages.edges.length === 0) break
        if (Date.now() > deadline) expect.fail(`not swept: ${JSON.stringify(conversation)}`)
      }
    } finally {
      await sweeper.stop()
      await alice!.run(SetRetention, { conversationId: group.id, seconds: null })
    }
    expect((await retained(bob!, group.id)).conversation!.retainedFromSeq).toBeGreaterThan(1)
  })
})

describe('legal hold', () => {
  it('keeps expired messages and what a recall would erase, is visible to members, and lifting it erases and sweeps', async () => {
    const operator = await newUser({ operator: true })
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    expect(codes(await alice!.try(SetLegalHold, { conversationId: group.id, hold: true }))).toEqual(['FORBIDDEN'])
    expect((await operator.run(SetLegalHold, { conversationId: group.id, hold: true })).setLegalHold.legalHold).toBe(
      true,
    )
    expect((await retained(bob!, group.id)).conversation!.legalHold).toBe(true)

    const word = `held${Date.now()}${Math.floor(Math.random() * 1e6)}`
    const message = (await sendText(alice!, group.id, `evidence ${word}`)).message
    await alice!.run(EditMessage, { messageId: message.id, text: `evidence again ${word}` })
    const recalled = (await alice!.run(RecallMessage, { messageId: message.id })).recallMessage
    expect(recalled).toMatchObject({ status: 'RECALLED', content: null, edits: [] })
    expect((await tablesHolding(word)).sort()).toEqual(['message_edits', 'messages'])
    // A takedown under hold keeps the content too.
    const takenWord = word.replace('held', 'taken')
    const taken = (await sendText(bob!, group.id, `more ${takenWord}`)).message
    await operator.run(RemoveMessage, { messageId: taken.id, reason: 'investigation' })
    expect(await tablesHolding(takenWord)).toEqual(['messages'])

    await operator.run(SetRetention, { conversationId: group.id, seconds: 1 })
    await sleep(1_200)
    await sweepRetention(testApp().app)
    expect((await retained(bob!, group.id)).conversation!.retainedFromSeq).toBe(1)
    expect((await tablesHolding(word)).sort()).toEqual(['message_edits', 'messages'])

    await operator.run(SetLegalHold, { conversationId: group.id, hold: false })
    expect(await tablesHolding(word)).toEqual([])
    expect(await tablesHolding(takenWord)).toEqual([])
    await sweepRetention(testApp().app)
    expect((await retained(bob!, group.id)).conversation!.retainedFromSeq).toBeGreaterThan(message.seq)
  })
})

const SweptThread = graphql(`
  query GovernanceSweptThread($id: ID!, $rootSeq: SafeInt!, $replySeq: SafeInt!) {
    conversation(id: $id) {
      retainedFromSeq
      unreadCount
      messages(first: 100) {
        edges {
          node {
            seq
            status
          }
        }
      }
      root: message(seq: $rootSeq) {
        id
        pts
        status
        content {
          __typename
        }
        recalledBy {
          id
        }
        reactions {
          count
        }
        thread {
          replyCount
          viewerFollowing
          viewerUnreadCount
        }
        replies(first: 10) {
          edges {
            node {
              seq
            }
          }
        }
      }
      reply: message(seq: $replySeq) {
        threadRoot {
          id
          seq
          status
        }
      }
    }
  }
`)

/** Rows of the conversation in the thread tables, and replies whose root row is missing. */
const threadRows = (conversationId: string) =>
  withDatabase(async (client) => {
    const { rows } = await client.query<{ threads: number; followers: number; orphans: number }>(
      `SELECT (SELECT count(*)::int FROM message_threads WHERE conversation_id = $1) AS threads,
        (SELECT count(*)::int FROM thread_followers WHERE conversation_id = $1) AS followers,
        (SELECT count(*)::int FROM messages r WHERE r.conversation_id = $1 AND r.thread_root_seq IS NOT NULL
          AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.conversation_id = r.conversation_id AND m.seq = r.thread_root_seq)) AS orphans`,
      [conversationKey(conversationId)],
    )
    return rows[0]!
  })

const swept = (user: TestUser, id: string, rootSeq: number, replySeq: number) =>
  user.run(SweptThread, { id, rootSeq, replySeq }).then((r) => r.conversation!)

describe('retention and threads (decision 0292)', () => {
  it('erases an expired root whose thread goes on, keeps it as a tombstone for its kept replies, and deletes it with its last reply', async () => {
    const [alice, bob, carol] = await newUsers(3)
    const group = await createGroup(alice!, [bob!, carol!])
    const word = `rootword${Date.now()}${Math.floor(Math.random() * 1e6)}`
    const root = (await sendText(alice!, group.id, `question ${word}`)).message
    await bob!.run(AddReaction, { messageId: root.id, emoji: '👀' })
    await bob!.run(SetFavorite, { messageId: root.id, favorite: true })
    await reply(bob!, group.id, root.id, { text: 'an old answer' })
    // A thread that expires whole: its root and its replies go, with its thread rows.
    const done = (await sendText(alice!, group.id, 'settled')).message
    await reply(carol!, group.id, done.id)
    await alice!.run(SetRetention, { conversationId: group.id, seconds: 2 })
    await sleep(2_200)
    const fresh = await reply(carol!, group.id, root.id, { text: 'a new answer' })
    const kept = (await sendText(carol!, group.id, 'kept')).message
    expect(await threadRows(group.id)).toEqual({ threads: 2, followers: 5, orphans: 0 })

    // Batches of two seqs: the root is erased in one batch and its tombstone outlives later ones.
    // Every message before the new reply went but the root. The count includes other tests'
    // expired conversations, and a sweeper of another server in the run may hold this one for a moment.
    const after = await vi.waitFor(
      async () => {
        await sweepRetention(testApp().app, 2)
        const state = await swept(bob!, group.id, root.seq, fresh.seq)
        expect(state.retainedFromSeq).toBe(fresh.seq)
        return state
      },
      { timeout: 10_000, interval: 200 },
    )
    expect(after.root).toMatchObject({ status: 'RECALLED', content: null, recalledBy: null, reactions: [] })
    expect(after.root!.pts).toBeGreaterThan(kept.pts)
    expect(after.root!.replies.edges.map((e) => e.node.seq)).toEqual([fresh.seq])
    // Bob replied and follows: carol's newer reply is his only unread one, counted once.
    expect(after.root!.thread).toEqual({ replyCount: 1, viewerFollowing: true, viewerUnreadCount: 1 })
    expect(after.reply!.threadRoot).toEqual({ id: root.id, seq: root.seq, status: 'RECALLED' })
    // History shows the tombstone above what is kept; bob's unread count is the kept message only.
    expect(after.messages.edges.map((e) => [e.node.seq, e.node.status])).toEqual([
      [root.seq, 'RECALLED'],
      [kept.seq, 'NORMAL'],
    ])
    expect(after.unreadCount).toBe(1)
    const threads = (await bob!.run(ViewerThreads, { first: 10 })).viewer.threads.edges.map((e) => e.node)
    expect(threads).toEqual([
      { id: root.id, seq: root.seq, conversationId: group.id, thread: { viewerUnreadCount: 1, replyCount: 1 } },
    ])
    // The erasure takes a pts: a device resuming the change feed learns of it.
    const changes = (await bob!.run(Changes, { id: group.id, sincePts: kept.pts })).conversation!.changes
    expect(changes.messages.map((m) => [m.seq, m.status])).toEqual([[root.seq, 'RECALLED']])
    expect(await tablesHolding(word)).toEqual([])
    expect(await threadRows(group.id)).toEqual({ threads: 1, followers: 3, orphans: 0 })

    // The last reply expires: the tombstone goes with it, and so do its thread rows.
    await sleep(2_200)
    const gone = await vi.waitFor(
      async () => {
        await sweepRetention(testApp().app, 2)
        const state = await swept(bob!, group.id, root.seq, fresh.seq)
        expect(state.retainedFromSeq).toBe(kept.seq + 1)
        return state
      },
      { timeout: 10_000, interval: 200 },
    )
    expect([gone.root, gone.reply, gone.messages.edges, gone.unreadCount]).toEqual([null, null, [], 0])
    expect((await bob!.run(ViewerThreads, { first: 10 })).viewer.threads.edges).toEqual([])
    expect(await threadRows(group.id)).toEqual({ threads: 0, followers: 0, orphans: 0 })
    await alice!.run(SetRetention, { conversationId: group.id, seconds: null })
  })
})
