import { describe, expect, it } from 'vitest'
import type { MessageContentInput } from '../gql/graphql.ts'
import { codes, newUsers, testApp, type TestUser } from '../support/harness.ts'
import { RemoveSticker, SaveSticker, StickerNode, Stickers } from '../support/interactions.ts'
import { RecallMessage, userKey } from '../support/lifecycle.ts'
import { createGroup, SendMessage, sendText } from '../support/operations.ts'

let counter = 0
async function send(user: TestUser, conversationId: string, content: MessageContentInput) {
  return (
    await user.run(SendMessage, {
      input: { conversationId, clientMessageId: `st-${process.pid}-${++counter}`, content },
    })
  ).sendMessage.message
}
const image = (url: string): MessageContentInput => ({ image: { url } })
const sticker = (url: string, label?: string): MessageContentInput => ({
  sticker: { stickerId: `s-${url}`, url, label },
})
const stickers = async (user: TestUser, first?: number, after?: string | null) =>
  (await user.run(Stickers, { first, after })).viewer.stickers

describe('saved stickers', () => {
  it('saves from IMAGE and STICKER messages, newest first, once per url, and removes them', async () => {
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    const cat = await send(alice!, group.id, image('https://example.com/cat.png'))
    const dog = await send(alice!, group.id, sticker('https://example.com/dog.webp', 'dog'))
    const catAgain = await send(bob!, group.id, image('https://example.com/cat.png'))

    const first = (await bob!.run(SaveSticker, { messageId: cat.id })).saveSticker
    expect(first).toMatchObject({ url: 'https://example.com/cat.png', label: null })
    const second = (await bob!.run(SaveSticker, { messageId: dog.id })).saveSticker
    expect(second).toMatchObject({ url: 'https://example.com/dog.webp', label: 'dog' })
    // The same url from another message is the same sticker.
    expect((await bob!.run(SaveSticker, { messageId: catAgain.id })).saveSticker).toEqual(first)
    const page = await stickers(bob!, 1)
    expect(page.edges.map((e) => e.node.id)).toEqual([second.id])
    expect(page.pageInfo.hasNextPage).toBe(true)
    expect((await stickers(bob!, 5, page.pageInfo.endCursor)).edges.map((e) => e.node.id)).toEqual([first.id])
    expect((await stickers(alice!)).edges).toEqual([])
    expect((await bob!.run(StickerNode, { id: first.id })).node).toMatchObject({ id: first.id, url: first.url })
    expect(codes(await alice!.try(StickerNode, { id: first.id }))).toEqual(['NOT_FOUND'])

    // Another user cannot remove it; the owner removes it once.
    expect((await alice!.run(RemoveSticker, { id: first.id })).removeSticker).toBe(false)
    expect((await bob!.run(RemoveSticker, { id: first.id })).removeSticker).toBe(true)
    expect((await bob!.run(RemoveSticker, { id: first.id })).removeSticker).toBe(false)
    expect((await stickers(bob!)).edges.map((e) => e.node.id)).toEqual([second.id])

    // Sending a saved sticker is an ordinary STICKER send.
    const sent = await send(bob!, group.id, sticker(second.url, second.label ?? undefined))
    expect(sent.kind).toBe('STICKER')
  })

  it('refuses other kinds, messages the viewer cannot see and recalled ones, saving nothing', async () => {
    const [alice, bob, outsider] = await newUsers(3)
    const group = await createGroup(alice!, [bob!])
    const text = (await sendText(alice!, group.id, 'not a picture')).message
    const pic = await send(alice!, group.id, image('https://example.com/secret.png'))
    const gone = await send(alice!, group.id, image('https://example.com/gone.png'))
    await alice!.run(RecallMessage, { messageId: gone.id })
    expect(codes(await bob!.try(SaveSticker, { messageId: text.id }))).toEqual(['BAD_USER_INPUT'])
    expect(codes(await outsider!.try(SaveSticker, { messageId: pic.id }))).toEqual(['NOT_FOUND'])
    expect(codes(await bob!.try(SaveSticker, { messageId: gone.id }))).toEqual(['MESSAGE_RECALLED'])
    expect(codes(await bob!.try(SaveSticker, { messageId: 'x' }))).toEqual(['BAD_USER_INPUT'])
    expect(codes(await bob!.try(RemoveSticker, { id: text.id }))).toEqual(['BAD_USER_INPUT'])
    expect((await stickers(bob!)).edges).toEqual([])
    expect((await stickers(outsider!)).edges).toEqual([])
  })

  it('keeps at most 300 a user, also when the last places are raced for (LIMIT_REACHED)', async () => {
    const [alice] = await newUsers(1)
    const group = await createGroup(alice!, [])
    // 298 saved already, written as the action leaves them.
    await testApp().db.$executeRawUnsafe(
      `INSERT INTO saved_stickers (user_id, url) SELECT $1, 'https://example.com/seed/' || g || '.png' FROM generate_series(1, 298) g`,
      BigInt(userKey(alice!.id)),
    )
    const racers = await Promise.all(
      Array.from({ length: 5 }, (_, i) => send(alice!, group.id, image(`https://example.com/race/${i}.png`))),
    )
    const results = await Promise.all(racers.map((m) => alice!.try(SaveSticker, { messageId: m.id })))
    expect(results.map(codes).filter((c) => c.length === 0)).toHaveLength(2)
    expect(results.map(codes).filter((c) => c[0] === 'LIMIT_REACHED')).toHaveLength(3)
    const all = await stickers(alice!, 100)
    expect(all.edges).toHaveLength(100)
    // A url already saved is still answered at the limit (idempotent), not refused.
    const saved = results.find((r) => r.data)!.data!.saveSticker
    const again = racers.find((m) => results[racers.indexOf(m)]!.data)!
    expect((await alice!.run(SaveSticker, { messageId: again.id })).saveSticker).toEqual(saved)
  })
})
