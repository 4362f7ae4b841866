import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseId } from '../../src/domain/core/ids.ts'
import { signedPath } from '../../src/domain/files/signing.ts'
import type { MessageContentInput } from '../gql/graphql.ts'
import { codes, newUsers, testApp, type TestUser } from '../support/harness.ts'
import { createGroup, OpenPrivate } from '../support/operations.ts'
import { RecallMessage } from '../support/lifecycle.ts'
import { startServer, type TestServer } from '../support/server.ts'
import { AttachmentNode, onServer, pngOf, ReadMedia, SendMedia, sha256, uploadFile } from '../support/files.ts'

let server: TestServer
beforeAll(async () => {
  server = await startServer()
})
afterAll(() => server.close())

let counter = 0
const send = (user: TestUser, conversationId: string, content: MessageContentInput) =>
  user.try(SendMedia, { input: { conversationId, clientMessageId: `files-${++counter}`, content } })
const sent = async (user: TestUser, conversationId: string, content: MessageContentInput) => {
  const response = await send(user, conversationId, content)
  if (response.errors) throw new Error(JSON.stringify(response.errors))
  return response.data!.sendMessage.message
}
const status = async (url: string) => (await fetch(onServer(url, server.url))).status
const bytesAt = async (url: string) => new Uint8Array(await (await fetch(onServer(url, server.url))).arrayBuffer())

/** A URL for the attachment signed for `user` as if Parley had handed it out: the download must still check access. */
const signedFor = (user: TestUser, attachmentId: string) =>
  new URL(
    signedPath(testApp().app.mediaKey, {
      variant: 'a',
      id: parseId(attachmentId, 'Attachment'),
      userId: parseId(user.id, 'User'),
      expires: Math.floor(Date.now() / 1000) + 600,
    }),
    server.url,
  ).toString()

describe('a message with an attachment', () => {
  it('is filled in from the attachment, and each member reads it by a URL signed for them', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    const png = await pngOf(640, 480)
    const attachment = await uploadFile(alice!, server.url, png)
    // What the sender claims besides the attachment is replaced by what the bytes showed.
    const message = await sent(alice!, group.id, { image: { attachmentId: attachment.id, width: 1, sizeBytes: 2 } })
    expect(message.content).toMatchObject({
      __typename: 'ImageContent',
      width: 640,
      height: 480,
      sizeBytes: png.length,
    })

    const read = (await bob!.run(ReadMedia, { id: group.id, seq: message.seq })).conversation!.message!
    const content = read.content as { url: string; thumbnailUrl: string; attachment: { id: string; sha256: string } }
    expect(content.attachment).toMatchObject({ id: attachment.id, sha256: sha256(png) })
    expect(new URL(content.url).searchParams.get('v')).toBe(String(parseId(bob!.id, 'User')))
    expect(sha256(await bytesAt(content.url))).toBe(sha256(png))
    expect(await status(content.thumbnailUrl)).toBe(200)
    expect((await bob!.run(AttachmentNode, { id: attachment.id })).node).toMatchObject({ sha256: sha256(png) })
  })

  it('is not readable by someone outside the conversation, not even with a URL signed for them', async () => {
    const [alice, bob, carol] = await newUsers(3)
    const group = await createGroup(alice!, [bob!])
    const attachment = await uploadFile(alice!, server.url, await pngOf(30, 30))
    await sent(alice!, group.id, { image: { attachmentId: attachment.id } })
    expect(codes(await carol!.try(AttachmentNode, { id: attachment.id }))).toEqual(['NOT_FOUND'])
    expect((await fetch(signedFor(carol!, attachment.id))).status).toBe(403)
    expect((await fetch(signedFor(bob!, attachment.id))).status).toBe(200)
  })

  it("names the sender's own attachment only: another user's is NOT_FOUND", async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    const attachment = await uploadFile(alice!, server.url, await pngOf(10, 10))
    expect(codes(await send(bob!, group.id, { image: { attachmentId: attachment.id } }))).toEqual(['NOT_FOUND'])
  })

  it.each([
    ['both a url and an attachment', (id: string) => ({ image: { url: 'https://x.test/a.png', attachmentId: id } })],
    ['neither', () => ({ image: { width: 10 } })],
    ['an audio url without its duration', () => ({ audio: { url: 'https://x.test/a.ogg' } })],
    ['a file url without its name', () => ({ file: { url: 'https://x.test/a', sizeBytes: 3 } })],
    ['an IMAGE content naming a FILE attachment', (id: string) => ({ image: { attachmentId: id } })],
  ])('is refused with %s', async (_what, content) => {
    const [alice] = await newUsers(1)
    const group = await createGroup(alice!, [])
    const file = await uploadFile(alice!, server.url, new TextEncoder().encode('text'), { kind: 'FILE', name: 'a.txt' })
    expect(codes(await send(alice!, group.id, content(file.id)))).toEqual(['BAD_USER_INPUT'])
  })

  it('can carry any attachment as a FILE, with its name and sniffed type', async () => {
    const [alice] = await newUsers(1)
    const group = await createGroup(alice!, [])
    const attachment = await uploadFile(alice!, server.url, await pngOf(10, 10), { name: 'scan.png' })
    const message = await sent(alice!, group.id, { file: { attachmentId: attachment.id, name: 'ignored' } })
    expect(message.content).toMatchObject({ name: 'scan.png', mimeType: 'image/png' })
  })

  it('stops granting access when recalled: URLs handed out before answer 403, the uploader keeps hers', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    const attachment = await uploadFile(alice!, server.url, await pngOf(50, 50))
    const message = await sent(alice!, group.id, { image: { attachmentId: attachment.id } })
    const read = (await bob!.run(ReadMedia, { id: group.id, seq: message.seq })).conversation!.message!
    const bobsUrl = (read.content as { url: string }).url
    expect(await status(bobsUrl)).toBe(200)

    await alice!.run(RecallMessage, { messageId: message.id })
    expect(await status(bobsUrl)).toBe(403)
    expect(codes(await bob!.try(AttachmentNode, { id: attachment.id }))).toEqual(['NOT_FOUND'])
    expect(await status(attachment.url)).toBe(200)
  })

  it('is carried by copies and merged forwards, which grant access to their own audience', async () => {
    const [alice, bob, carol, dave] = await newUsers(4)
    const group = await createGroup(alice!, [bob!])
    const attachment = await uploadFile(alice!, server.url, await pngOf(40, 20))
    const original = await sent(alice!, group.id, { image: { attachmentId: attachment.id } })
    expect((await fetch(signedFor(carol!, attachment.id))).status).toBe(403)

    const toCarol = (await bob!.run(OpenPrivate, { userId: carol!.id })).openPrivateConversation
    const copy = await sent(bob!, toCarol.id, { copy: { messageId: original.id } })
    const carolReads = (await carol!.run(ReadMedia, { id: toCarol.id, seq: copy.seq })).conversation!.message!
    expect(await status((carolReads.content as { url: string }).url)).toBe(200)

    const toDave = (await bob!.run(OpenPrivate, { userId: dave!.id })).openPrivateConversation
    const forward = await sent(bob!, toDave.id, { forward: { messageIds: [original.id] } })
    const daveReads = (await dave!.run(ReadMedia, { id: toDave.id, seq: forward.seq })).conversation!.message!
    const item = (daveReads.content as { items: { content: { url: string; attachment: { id: string } } }[] }).items[0]!
    expect(item.content.attachment.id).toBe(attachment.id)
    expect(await status(item.content.url)).toBe(200)
  })
})
