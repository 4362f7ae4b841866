import { gunzipSync } from 'node:zlib'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { encodeGlobalId, parseId } from '../../src/domain/core/ids.ts'
import { graphql } from '../gql/gql.ts'
import { newUser, newUsers } from '../support/harness.ts'
import { RecallMessage } from '../support/lifecycle.ts'
import { createGroup, SendMessage, sendText } from '../support/operations.ts'
import { startServer, type TestServer } from '../support/server.ts'

const ExportAudit = graphql(`
  query GovernanceExportAudit($actorId: ID) {
    auditLog(actorId: $actorId, action: "conversation.export") {
      edges {
        node {
          targetId
        }
      }
    }
  }
`)

type Line = {
  id: string
  seq: number
  kind: string
  status: string
  content: { text?: string } | null
  sender: { id: string } | null
}

const exportUrl = (base: string, conversationId: string) =>
  `${new URL(base).origin}/export/conversations/${conversationId}`

const get = (url: string, token: string | null, headers: Record<string, string> = {}) =>
  fetch(url, { headers: { ...headers, ...(token ? { authorization: `Bearer ${token}` } : {}) } })

const linesOf = (text: string): Line[] =>
  text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Line)

describe('GET /export/conversations/{id}', () => {
  let server: TestServer
  beforeAll(async () => (server = await startServer()))
  afterAll(() => server.close())

  it('streams every message in seq order as NDJSON, recalled and directed ones included, and is audited', async () => {
    const operator = await newUser({ operator: true })
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    await sendText(alice!, group.id, 'one')
    const two = (await sendText(bob!, group.id, 'two')).message
    await alice!.run(SendMessage, {
      input: {
        conversationId: group.id,
        clientMessageId: `directed-${Math.random()}`,
        content: { text: { text: 'for bob' } },
        visibleToUserIds: [bob!.id],
      },
    })
    await bob!.run(RecallMessage, { messageId: two.id })

    const response = await get(exportUrl(server.url, group.id), operator.token)
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toMatch(/^application\/x-ndjson/)
    const lines = linesOf(await response.text())
    expect(lines.map((l) => l.seq)).toEqual([...lines.map((l) => l.seq)].sort((a, b) => a - b))
    const texts = lines.filter((l) => l.kind === 'TEXT').map((l) => [l.status, l.content?.text ?? null, l.sender?.id])
    expect(texts).toEqual([
      ['NORMAL', 'one', alice!.id],
      ['RECALLED', null, bob!.id],
      ['NORMAL', 'for bob', alice!.id],
    ])
    const audit = await operator.run(ExportAudit, { actorId: operator.id })
    expect(audit.auditLog.edges.map((e) => e.node.targetId)).toEqual([group.id])

    // gzip when asked, the same lines.
    const zipped = await get(exportUrl(server.url, group.id), operator.token, { 'accept-encoding': 'gzip' })
    expect(zipped.headers.get('content-encoding')).toBe('gzip')
    const body = Buffer.from(await zipped.arrayBuffer())
    // fetch may already have decoded it; either way the text is the same NDJSON.
    const text = body[0] === 0x1f && body[1] === 0x8b ? gunzipSync(body).toString('utf8') : body.toString('utf8')
    expect(linesOf(text)).toEqual(lines)
  })

  it('answers 401 without a token, 403 for a non-operator, 404 for a missing conversation, and audits none of them', async () => {
    const operator = await newUser({ operator: true })
    const [alice] = await newUsers(1)
    const group = await createGroup(alice!, [])
    expect((await get(exportUrl(server.url, group.id), null)).status).toBe(401)
    expect((await get(exportUrl(server.url, group.id), 'not-a-token')).status).toBe(401)
    expect((await get(exportUrl(server.url, group.id), alice!.token)).status).toBe(403)
    const missing = encodeGlobalId('Conversation', parseId(group.id, 'Conversation') + 1_000_000_000)
    expect((await get(exportUrl(server.url, missing), operator.token)).status).toBe(404)
    expect((await operator.run(ExportAudit, { actorId: operator.id })).auditLog.edges).toEqual([])
  })
})

describe('a long export', () => {
  it('streams 20,000 messages in seq order, page after page', async () => {
    const operator = await newUser({ operator: true })
    const [alice] = await newUsers(1)
    const group = await createGroup(alice!, [])
    const conversationId = parseId(group.id, 'Conversation')
    const total = 20_000
    const client = new pg.Client({ connectionString: inject('databaseUrl') })
    await client.connect()
    try {
      // Written in one statement as a long history would be: seq and pts after the group's own.
      await client.query(
        `WITH last AS (SELECT last_seq, last_pts FROM conversations WHERE id = $1),
         added AS (
           INSERT INTO messages (conversation_id, seq, pts, sender_type, sender_id, kind, content, sent_at)
           SELECT $1, last.last_seq + n, last.last_pts + n, 'USER', $2, 'TEXT',
             jsonb_build_object('text', 'message number ' || n), now()
           FROM last, generate_series(1, $3::int) n RETURNING seq)
         UPDATE conversations SET last_seq = last_seq + $3, last_pts = last_pts + $3 WHERE id = $1`,
        [conversationId, parseId(alice!.id, 'User'), total],
      )
    } finally {
      await client.end()
    }
    const server = await startServer()
    try {
      const lines = linesOf(await (await get(exportUrl(server.url, group.id), operator.token)).text())
      const texts = lines.filter((l) => l.content?.text?.startsWith('message number '))
      expect(texts).toHaveLength(total)
      expect(texts.map((l) => l.content!.text)).toEqual(
        Array.from({ length: total }, (_, n) => `message number ${n + 1}`),
      )
      expect(lines.map((l) => l.seq)).toEqual(Array.from({ length: lines.length }, (_, n) => n + 1))
    } finally {
      await server.close()
    }
  })
})
