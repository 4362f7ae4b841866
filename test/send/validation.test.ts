import { describe, expect, inject, it } from 'vitest'
import { createDb } from '../../src/db/client.ts'
import { createApp } from '../../src/app.ts'
import { DEFAULT_SETTINGS } from '../../src/domain/core/settings.ts'
import { encodeGlobalId } from '../../src/domain/core/ids.ts'
import { createRealtime } from '../../src/realtime/pubsub.ts'
import { createParleyServer } from '../../src/http/server.ts'
import { AUTH_SECRET, codes, newUsers, request } from '../support/harness.ts'
import { createGroup, lastSeqOf, SendMessage, sendText } from '../support/operations.ts'

describe('bad input to sendMessage', () => {
  it('answers each with its code and stores nothing', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    await sendText(alice!, group.id, 'before')
    const before = await lastSeqOf(alice!, group.id)
    const text = (t: string) => ({ text: { text: t } })
    const cases: [name: string, variables: { input: Record<string, unknown> }, code: string][] = [
      [
        'malformed conversation id',
        { input: { conversationId: 'not-an-id', clientMessageId: 'a', content: text('x') } },
        'BAD_USER_INPUT',
      ],
      [
        'a user id where a conversation id belongs',
        { input: { conversationId: bob!.id, clientMessageId: 'a', content: text('x') } },
        'BAD_USER_INPUT',
      ],
      [
        'unknown conversation',
        {
          input: {
            conversationId: encodeGlobalId('Conversation', 8_999_999_999),
            clientMessageId: 'a',
            content: text('x'),
          },
        },
        'NOT_FOUND',
      ],
      [
        'clientMessageId over 128 characters',
        { input: { conversationId: group.id, clientMessageId: 'k'.repeat(129), content: text('x') } },
        'BAD_USER_INPUT',
      ],
      [
        'empty clientMessageId',
        { input: { conversationId: group.id, clientMessageId: '', content: text('x') } },
        'BAD_USER_INPUT',
      ],
      [
        'empty text',
        { input: { conversationId: group.id, clientMessageId: 'b', content: text('') } },
        'BAD_USER_INPUT',
      ],
      [
        'whitespace-only text',
        { input: { conversationId: group.id, clientMessageId: 'c', content: text(' \n\t ') } },
        'BAD_USER_INPUT',
      ],
      [
        'text over 10,000 characters',
        { input: { conversationId: group.id, clientMessageId: 'd', content: text('x'.repeat(10_001)) } },
        'BAD_USER_INPUT',
      ],
      ['no content kind', { input: { conversationId: group.id, clientMessageId: 'e', content: {} } }, 'BAD_USER_INPUT'],
      [
        'two content kinds',
        {
          input: {
            conversationId: group.id,
            clientMessageId: 'f',
            content: { ...text('x'), sticker: { stickerId: 's', url: 'https://x.test/s.png' } },
          },
        },
        'BAD_USER_INPUT',
      ],
      [
        'malformed mention id',
        { input: { conversationId: group.id, clientMessageId: 'g', content: text('x'), mentionUserIds: ['???'] } },
        'BAD_USER_INPUT',
      ],
      [
        'empty quoted message id',
        { input: { conversationId: group.id, clientMessageId: 'h', content: text('x'), quotedMessageId: '' } },
        'BAD_USER_INPUT',
      ],
    ]
    for (const [name, variables, code] of cases) {
      const response = await alice!.try(SendMessage, variables as never)
      expect(codes(response), name).toEqual([code])
      expect(JSON.stringify(response.errors), name).not.toMatch(/\bat\s+\S+\.(ts|js):\d+/)
    }
    expect(await lastSeqOf(alice!, group.id)).toBe(before)
    // The limit itself is allowed.
    expect((await sendText(alice!, group.id, 'x'.repeat(10_000))).message.seq).toBe(before + 1)
    expect((await sendText(alice!, group.id, 'ok', 'k'.repeat(128))).message.seq).toBe(before + 2)
  })
})

describe('a document that fails validation', () => {
  it('is refused the same way each time it is sent, and a valid document sent between is served (validation is cached per document)', async () => {
    const [alice] = await newUsers(1)
    const invalid = '{ viewer { user { handle nope } } }'
    const answers = []
    for (let i = 0; i < 3; i++) {
      answers.push(await request(alice!.token, invalid))
      expect(
        (await request<{ viewer: { user: { handle: string } } }, never>(alice!.token, '{ viewer { user { handle } } }'))
          .data?.viewer.user.handle,
      ).toBe(alice!.handle)
    }
    for (const answer of answers) expect(codes(answer)).toEqual(['GRAPHQL_VALIDATION_FAILED'])
    expect(answers[0]!.errors![0]!.message).toMatch(/Cannot query field "nope"/)
    expect(new Set(answers.map((a) => JSON.stringify(a.errors))).size).toBe(1)
  })
})

describe('unexpected errors', () => {
  it('are masked as INTERNAL_SERVER_ERROR with no internals, and logged', async () => {
    const logged: unknown[] = []
    const logger = { debug() {}, info() {}, warn() {}, error: (...args: unknown[]) => void logged.push(args) }
    // A database without Parley's tables (the server's admin database) makes every query fail
    // unexpectedly; one that cannot be reached is an outage (UNAVAILABLE: test/ops/db-outage.test.ts).
    const db = createDb(inject('adminDatabaseUrl'), { poolSize: 1 })
    const app = createApp({ db, realtime: createRealtime(), settings: DEFAULT_SETTINGS })
    const server = createParleyServer({ app, authSecret: AUTH_SECRET, maxBodyBytes: 10_000, production: false, logger })
    const [user] = await newUsers(1)
    const response = await server.yoga.fetch('http://parley.test/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${user!.token}` },
      body: JSON.stringify({ query: '{ viewer { user { id } } }' }),
    })
    const body = (await response.json()) as { errors: { message: string; extensions: Record<string, unknown> }[] }
    expect(body.errors).toHaveLength(1)
    expect(body.errors[0]!.message).toBe('Unexpected error.')
    expect(body.errors[0]!.extensions).toEqual({ code: 'INTERNAL_SERVER_ERROR' })
    expect(JSON.stringify(body)).not.toMatch(/relation|does not exist|stack/)
    expect(logged.length).toBeGreaterThan(0)
    await db.$disconnect()
  })
})
