import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseId } from '../../src/domain/core/ids.ts'
import type { MessageContentInput } from '../gql/graphql.ts'
import { codes, newUsers, testApp, type TestUser } from '../support/harness.ts'
import { createGroup } from '../support/operations.ts'
import { RecallMessage } from '../support/lifecycle.ts'
import { SaveSticker } from '../support/interactions.ts'
import { startServer, type TestServer } from '../support/server.ts'
import { onServer, pngOf, ReadMedia, SendMedia, sha256, uploadFile } from '../support/files.ts'
import { sweepAttachments } from '../../src/domain/files/index.ts'

let server: TestServer
beforeAll(async () => {
  server = await startServer()
})
afterAll(() => server.close())

let counter = 0
const sent = async (user: TestUser, conversationId: string, content: MessageContentInput) => {
  const response = await user.try(SendMedia, {
    input: { conversationId, clientMessageId: `stickers-${++counter}`, content },
  })
  if (response.errors) throw new Error(JSON.stringify(response.errors))
  return response.data!.sendMessage.message
}
const read = async (user: TestUser, conversationId: string, seq: number) =>
  (await user.run(ReadMedia, { id: conversationId, seq })).conversation!.message!
const status = async (url: string) => (await fetch(onServer(url, server.url))).status
const bytesAt = async (url: string) => new Uint8Array(await (await fetch(onServer(url, server.url))).arrayBuffer())
const signedTo = (url: string) => Number(new URL(url).searchParams.get('v'))

describe('a sticker saved from an uploaded image', () => {
  it('keeps the image for the saver, signed for them, after the message is recalled too', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    const png = await pngOf(64, 64)
    const attachment = await uploadFile(alice!, server.url, png)
    const message = await sent(alice!, group.id, { image: { attachmentId: attachment.id } })

    const saved = (await bob!.run(SaveSticker, { messageId: message.id })).saveSticker
    expect(signedTo(saved.url)).toBe(parseId(bob!.id, 'User'))
    expect(sha256(await bytesAt(saved.url))).toBe(sha256(png))
    // Idempotent per image: saving it again returns the same sticker.
    expect((await bob!.run(SaveSticker, { messageId: message.id })).saveSticker.id).toBe(saved.id)

    await alice!.run(RecallMessage, { messageId: message.id })
    expect(await status(saved.url)).toBe(200)
    // The sweeper leaves an old file that a saved sticker keeps, though no message grants it any more.
    const id = parseId(attachment.id, 'Attachment')
    await testApp().app.db
      .$executeRaw`UPDATE attachments SET completed_at = completed_at - interval '25 hours' WHERE id = ${id}`
    await sweepAttachments(testApp().app)
    expect(await status(saved.url)).toBe(200)
  })

  it('sent as a sticker, grants the image to the new conversation and to no one else', async () => {
    const [alice, bob, carol, dave] = await newUsers(4)
    const first = await createGroup(alice!, [bob!])
    const png = await pngOf(32, 48)
    const attachment = await uploadFile(alice!, server.url, png)
    const original = await sent(alice!, first.id, { image: { attachmentId: attachment.id } })
    const saved = (await bob!.run(SaveSticker, { messageId: original.id })).saveSticker

    const second = await createGroup(bob!, [carol!])
    const sticker = await sent(bob!, second.id, { sticker: { stickerId: saved.id, url: saved.url, label: 'wave' } })
    const seen = (await read(carol!, second.id, sticker.seq)).content as {
      __typename: string
      stickerId: string
      url: string
      label: string
      attachment: { id: string }
    }
    expect(seen).toMatchObject({ __typename: 'StickerContent', stickerId: saved.id, label: 'wave' })
    expect(seen.attachment.id).toBe(attachment.id)
    expect(signedTo(seen.url)).toBe(parseId(carol!.id, 'User'))
    expect(sha256(await bytesAt(seen.url))).toBe(sha256(png))

    // Dave is in neither conversation: a URL signed for him by Parley's key would still be refused.
    const forDave = new URL(seen.url)
    forDave.searchParams.set('v', String(parseId(dave!.id, 'User')))
    expect(await status(forDave.toString())).toBe(403)

    // Recalling the sticker message takes Carol's access away; Bob keeps his sticker.
    await bob!.run(RecallMessage, { messageId: sticker.id })
    expect(await status(seen.url)).toBe(403)
    expect(await status(saved.url)).toBe(200)
  })

  it("is NOT_FOUND as someone else's saved sticker, and a plain stickerId stays the client's name", async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    const attachment = await uploadFile(alice!, server.url, await pngOf(16, 16))
    const message = await sent(alice!, group.id, { image: { attachmentId: attachment.id } })
    const saved = (await bob!.run(SaveSticker, { messageId: message.id })).saveSticker

    const response = await alice!.try(SendMedia, {
      input: {
        conversationId: group.id,
        clientMessageId: `stickers-${++counter}`,
        content: { sticker: { stickerId: saved.id, url: saved.url } },
      },
    })
    expect(codes(response)).toEqual(['NOT_FOUND'])

    const named = await sent(alice!, group.id, {
      sticker: { stickerId: 'wave_01', url: 'https://cdn.example/wave.png' },
    })
    expect(named.content).toMatchObject({ stickerId: 'wave_01', url: 'https://cdn.example/wave.png', attachment: null })
  })
})
