import { describe, expect, it } from 'vitest'
import { messageGlobalId, parseId } from '../../src/domain/core/ids.ts'
import type { MessageContentInput } from '../gql/graphql.ts'
import { codes, newUsers, request } from '../support/harness.ts'
import { createGroup, lastSeqOf, SendMessage, sendText } from '../support/operations.ts'
import { ReadContent, SendContent } from '../support/views.ts'

let counter = 0
const send = (conversationId: string, content: MessageContentInput) => ({
  input: { conversationId, clientMessageId: `content-${++counter}`, content },
})
const url = 'https://cdn.example.com/media/1'

describe('content kinds', () => {
  it('stores every kind and returns it as its union member, without unset fields', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    const cases: [MessageContentInput, string, Record<string, unknown>][] = [
      [
        { image: { url, width: 640, height: 480, sizeBytes: 1234, thumbnailUrl: `${url}/t` } },
        'ImageContent',
        { width: 640, thumbnailUrl: `${url}/t` },
      ],
      [{ image: { url } }, 'ImageContent', { width: null, height: null, sizeBytes: null, thumbnailUrl: null }],
      [{ audio: { url, durationMs: 3200 } }, 'AudioContent', { durationMs: 3200, sizeBytes: null }],
      [
        { video: { url, durationMs: 60_000, width: 1920, height: 1080, coverUrl: `${url}/c`, sizeBytes: 9_000_000 } },
        'VideoContent',
        { coverUrl: `${url}/c` },
      ],
      [
        { file: { url, name: 'report.pdf', sizeBytes: 0, mimeType: 'application/pdf' } },
        'FileContent',
        { name: 'report.pdf', fileSizeBytes: 0, mimeType: 'application/pdf' },
      ],
      [
        { sticker: { stickerId: 'cat-42', url, label: 'cat' } },
        'StickerContent',
        { stickerId: 'cat-42', label: 'cat' },
      ],
      [
        { card: { cardType: 'leave_approval', data: { leaveId: 78, status: 'approved', nested: { ok: true } } } },
        'CardContent',
        { data: { leaveId: 78, status: 'approved', nested: { ok: true } } },
      ],
      [
        { material: { title: 'Release notes', url, digest: 'What changed' } },
        'MaterialContent',
        { coverUrl: null, digest: 'What changed' },
      ],
    ]
    for (const [content, typename, expected] of cases) {
      const sent = (await alice!.run(SendContent, send(group.id, content))).sendMessage.message
      expect(sent.content, typename).toMatchObject({ __typename: typename, ...expected })
      // Bob reads the same thing back from history.
      const read = (await bob!.run(ReadContent, { id: group.id, seq: sent.seq })).conversation!.message!
      expect(read).toEqual({ kind: sent.kind, content: sent.content })
    }
  })

  it('rejects each invalid content with BAD_USER_INPUT and stores nothing', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    const before = await lastSeqOf(alice!, group.id)
    const cases: [string, MessageContentInput][] = [
      ['non-http URL', { image: { url: 'ftp://cdn.example.com/a.png' } }],
      ['javascript URL', { file: { url: 'javascript:alert(1)', name: 'x', sizeBytes: 1 } }],
      ['relative URL', { sticker: { stickerId: 's', url: '/s.png' } }],
      ['URL over 2048 characters', { image: { url: `https://x.test/${'a'.repeat(2048)}` } }],
      ['bad thumbnail URL', { image: { url, thumbnailUrl: 'not a url' } }],
      ['zero width', { image: { url, width: 0 } }],
      ['width over 20000', { video: { url, durationMs: 1, width: 20_001 } }],
      ['negative size', { audio: { url, durationMs: 10, sizeBytes: -1 } }],
      ['size over 2 GB', { file: { url, name: 'big', sizeBytes: 2_000_000_001 } }],
      ['zero duration', { audio: { url, durationMs: 0 } }],
      ['duration over 4 hours', { video: { url, durationMs: 4 * 3600 * 1000 + 1 } }],
      ['blank file name', { file: { url, name: '  ', sizeBytes: 1 } }],
      ['file name over 255', { file: { url, name: 'n'.repeat(256), sizeBytes: 1 } }],
      ['malformed MIME type', { file: { url, name: 'a', sizeBytes: 1, mimeType: 'pdf' } }],
      ['blank sticker id', { sticker: { stickerId: '', url } }],
      ['sticker label over 100', { sticker: { stickerId: 's', url, label: 'n'.repeat(101) } }],
      ['card data not an object', { card: { cardType: 'x', data: [1, 2] } }],
      ['card data a string', { card: { cardType: 'x', data: 'text' } }],
      ['card data over 16 KiB', { card: { cardType: 'x', data: { blob: 'b'.repeat(16 * 1024) } } }],
      ['card type not an identifier', { card: { cardType: 'has space', data: {} } }],
      ['card type over 64', { card: { cardType: 'c'.repeat(65), data: {} } }],
      ['material without title', { material: { title: ' ', url } }],
      ['material digest over 1000', { material: { title: 't', url, digest: 'd'.repeat(1001) } }],
      ['forward without messages', { forward: { messageIds: [] } }],
      ['forward of a malformed id', { forward: { messageIds: ['nope'] } }],
      ['forward title over 200', { forward: { title: 't'.repeat(201), messageIds: ['nope'] } }],
    ]
    for (const [name, content] of cases) {
      expect(codes(await alice!.try(SendContent, send(group.id, content))), name).toEqual(['BAD_USER_INPUT'])
    }
    expect(await lastSeqOf(alice!, group.id)).toBe(before)
    // The limits themselves are allowed.
    const edge: MessageContentInput[] = [
      { card: { cardType: 'x', data: { blob: 'b'.repeat(16 * 1024 - 20) } } },
      {
        video: {
          url: `https://x.test/${'a'.repeat(2048 - 15)}`,
          durationMs: 4 * 3600 * 1000,
          width: 20_000,
          sizeBytes: 2_000_000_000,
        },
      },
    ]
    for (const content of edge) await alice!.run(SendContent, send(group.id, content))
    expect(await lastSeqOf(alice!, group.id)).toBe(before + 2)
  })

  it('rejects a @oneOf content with zero or two members: BAD_USER_INPUT in variables, a validation error inline', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    const before = await lastSeqOf(alice!, group.id)
    const viaVariables = [{}, { text: { text: 'a' }, sticker: { stickerId: 's', url } }, { text: null, image: { url } }]
    for (const content of viaVariables) {
      const response = await alice!.try(SendMessage, {
        input: { conversationId: group.id, clientMessageId: `oneof-${++counter}`, content } as never,
      })
      expect(codes(response), JSON.stringify(content)).toEqual(['BAD_USER_INPUT'])
      // graphql-js's message (graphql-jit, which executes, ignores @oneOf).
      expect(response.errors![0]!.message).toContain(
        'Exactly one key must be specified for OneOf type "MessageContentInput".',
      )
    }
    // Refused by graphql-jit as well: the answer is still graphql-js's message, not graphql-jit's.
    const unknownField = await alice!.try(SendMessage, {
      input: {
        conversationId: group.id,
        clientMessageId: `oneof-${++counter}`,
        content: { text: { text: 'a' } },
        bogus: 1,
      } as never,
    })
    expect(codes(unknownField)).toEqual(['BAD_USER_INPUT'])
    expect(unknownField.errors![0]!.message).toContain('Field "bogus" is not defined by type "SendMessageInput".')
    for (const literal of ['{}', '{ text: { text: "a" }, image: { url: "https://x.test/a" } }']) {
      const response = await request(
        alice!.token,
        `mutation { sendMessage(input: { conversationId: "${group.id}", clientMessageId: "inline-${++counter}", content: ${literal} }) { deduplicated } }`,
      )
      // Written into the document itself, it fails validation before execution (Yoga's code for that).
      expect(codes(response), literal).toEqual(['GRAPHQL_VALIDATION_FAILED'])
      expect(response.errors![0]!.message).toMatch(/exactly one/i)
    }
    expect(await lastSeqOf(alice!, group.id)).toBe(before)
  })
})

describe('merged forward', () => {
  it('snapshots visible messages from several conversations, oldest first, with a default title', async () => {
    const [alice, bob, carol] = await newUsers(3)
    const first = await createGroup(alice!, [bob!])
    const second = await createGroup(bob!, [carol!])
    const a = await sendText(alice!, first.id, 'from alice')
    const image = (await bob!.run(SendContent, send(first.id, { image: { url, width: 10 } }))).sendMessage.message
    const c = await sendText(carol!, second.id, 'from carol')
    const target = await createGroup(bob!, [alice!])
    // Given newest first and with a duplicate: the snapshot is in sending order, once each.
    const forward = { messageIds: [c.message.id, image.id, a.message.id, a.message.id] }
    const sent = (await bob!.run(SendContent, send(target.id, { forward }))).sendMessage.message
    expect(sent.kind).toBe('FORWARD')
    const names = [alice!.handle, bob!.handle, carol!.handle]
    expect(sent.content).toMatchObject({
      __typename: 'ForwardContent',
      title: `Chat history of ${names[0]}, ${names[1]} and 1 other`,
      items: [
        { senderName: names[0], kind: 'TEXT', content: { __typename: 'TextContent', text: 'from alice' } },
        { senderName: names[1], kind: 'IMAGE', content: { __typename: 'ImageContent', url, width: 10 } },
        { senderName: names[2], kind: 'TEXT', content: { __typename: 'TextContent', text: 'from carol' } },
      ],
    })
    // Alice is not in the second group, yet reads the snapshot Bob shared.
    const read = (await alice!.run(ReadContent, { id: target.id, seq: sent.seq })).conversation!.message!
    expect(read.content).toMatchObject({
      title: sent.content && 'title' in sent.content ? sent.content.title : '',
      items: [{}, {}, { content: { text: 'from carol' } }],
    })
    // A given title is kept; a forward of a forward nests.
    const nested = (
      await alice!.run(SendContent, send(target.id, { forward: { title: 'Our plan', messageIds: [sent.id] } }))
    ).sendMessage.message
    expect(nested.content).toMatchObject({ title: 'Our plan', items: [{ senderName: names[1], kind: 'FORWARD' }] })
  })

  it('answers NOT_FOUND for a source the sender cannot see, BAD_USER_INPUT for system notices and over 100 ids, storing nothing', async () => {
    const [alice, bob, carol] = await newUsers(3)
    const target = await createGroup(alice!, [bob!])
    const elsewhere = await createGroup(bob!, [carol!])
    const hidden = await sendText(carol!, elsewhere.id, 'not for alice')
    const mine = await sendText(alice!, target.id, 'mine')
    const at = (seq: number) => messageGlobalId({ conversationId: parseId(target.id, 'Conversation'), seq })
    const before = await lastSeqOf(alice!, target.id)
    const cases: [string, string[], string][] = [
      ['a message in a conversation alice is not in', [mine.message.id, hidden.message.id], 'NOT_FOUND'],
      ['a message that does not exist', [mine.message.id, at(before + 50)], 'NOT_FOUND'],
      ['a system notice (CONVERSATION_CREATED)', [at(1)], 'BAD_USER_INPUT'],
      ['101 messages', Array.from({ length: 101 }, () => mine.message.id), 'BAD_USER_INPUT'],
    ]
    for (const [name, messageIds, code] of cases) {
      expect(codes(await alice!.try(SendContent, send(target.id, { forward: { messageIds } }))), name).toEqual([code])
    }
    expect(await lastSeqOf(alice!, target.id)).toBe(before)
  })
})
