import { randomUUID } from 'node:crypto'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { newUser, type TestUser } from '../support/harness.ts'
import { CreateGroup, OpenPrivate, SendMessage } from '../support/operations.ts'
import { Append, Finish, StartStream } from '../support/agents.ts'
import { Stickers } from '../support/interactions.ts'
import { pngOf } from '../support/files.ts'
import { parseId } from '../../src/domain/core/ids.ts'
import { startWorkbench, type Workbench } from '../support/workbench.ts'
import { graphql } from '../gql/index.ts'
import type { MessageContentInput } from '../gql/graphql.ts'

/** The message side of the workbench in Chromium, alice and bob in two browser contexts. */

let web: Workbench
let alice: TestUser
let bob: TestUser
let privateId: string
let groupId: string
let groupTitle: string

const FollowState = graphql(`
  query WorkbenchFollowState($id: ID!) {
    node(id: $id) {
      ... on Message {
        thread {
          replyCount
          viewerFollowing
        }
      }
    }
  }
`)

type ContentInput = MessageContentInput
const send = async (user: TestUser, conversationId: string, content: ContentInput) =>
  (await user.run(SendMessage, { input: { conversationId, clientMessageId: randomUUID(), content } })).sendMessage
    .message

const item = (page: Page, name: string) => page.locator(`[data-conversation="${name}"]`)
/** Opens a conversation, and waits until its live events reach the user and its page has loaded. */
async function open(user: TestUser, page: Page, name: string) {
  const subscriptions = () => web.server.app.hub.stats(parseId(user.id, 'User')).subscriptions
  const before = subscriptions()
  await item(page, name).click()
  await expect.poll(subscriptions).toBeGreaterThan(before)
  await web.settled(page)
}
const bubble = (page: Page, text: string) => page.locator('.messages').getByTestId('message').filter({ hasText: text })
const panel = (page: Page) => page.getByRole('region', { name: 'Messages' })
const thread = (page: Page) => page.getByRole('complementary', { name: 'Thread' })

beforeAll(async () => {
  web = await startWorkbench({ 'sticker-wave.png': await pngOf(96, 96) })
  ;[alice, bob] = await Promise.all([
    newUser({ prefix: 'alice', name: 'Alice 陈' }),
    newUser({ prefix: 'bob', name: 'Bob Li' }),
  ])
  privateId = (await alice.run(OpenPrivate, { userId: bob.id })).openPrivateConversation.id
  groupTitle = `前端 Frontend ${alice.handle.slice(-4)}`
  groupId = (await alice.run(CreateGroup, { input: { title: groupTitle, memberIds: [bob.id] } })).createGroup.id
}, 120_000)

afterAll(async () => {
  await web?.close()
})

it('reactions: bob adds one, alice sees it live and adds hers, counts and her own highlighted; taking one back', async () => {
  await send(alice, groupId, { text: { text: '发布计划 release plan' } })
  const [a, b] = await Promise.all([web.signedIn(alice), web.signedIn(bob)])
  await Promise.all([open(alice, a.page, groupTitle), open(bob, b.page, groupTitle)])
  // Bob's read refetches alice's receipts: let that answer land before the reactions change.
  await bubble(a.page, 'release plan').getByTestId('tail').filter({ hasText: '1 read' }).waitFor()
  await web.settled(a.page)

  const forBob = bubble(b.page, 'release plan')
  await forBob.getByRole('button', { name: 'Add a reaction' }).click()
  await forBob.getByRole('button', { name: 'React 👍' }).click()
  await forBob.getByRole('button', { name: '👍 1', pressed: true }).waitFor()

  const forAlice = bubble(a.page, 'release plan')
  await forAlice.getByRole('button', { name: '👍 1', pressed: false }).waitFor()
  await forAlice.getByRole('button', { name: '👍 1' }).click()
  await forAlice.getByRole('button', { name: '👍 2', pressed: true }).waitFor()
  await forBob.getByRole('button', { name: '👍 2', pressed: true }).waitFor()
  await web.shot(a.page, 'm1-reactions')

  // Bob takes his back: one left, alice's, shown unpressed on his side.
  await forBob.getByRole('button', { name: '👍 2' }).click()
  await forBob.getByRole('button', { name: '👍 1', pressed: false }).waitFor()
  await forAlice.getByRole('button', { name: '👍 1', pressed: true }).waitFor()
  expect(web.failures).toEqual([])
  await Promise.all([a.context.close(), b.context.close()])
}, 90_000)

it('threads: a reply count on the root, live; the panel lists replies, sends with threadRootId, and unfollows', async () => {
  const root = await send(alice, groupId, { text: { text: '问题 which bundler?' } })
  const [a, b] = await Promise.all([web.signedIn(alice), web.signedIn(bob)])
  await Promise.all([open(alice, a.page, groupTitle), open(bob, b.page, groupTitle)])

  await bubble(a.page, 'which bundler').locator('.bubble').click({ button: 'right' })
  await a.page.getByRole('menuitem', { name: 'Reply in thread' }).click()
  await thread(a.page).getByLabel('Reply in thread').fill('Vite 吧')
  await thread(a.page).getByLabel('Reply in thread').press('Enter')
  await thread(a.page).getByTestId('message').filter({ hasText: 'Vite 吧' }).waitFor()

  // Bob's view: the count arrives with the reply's event; the reply stays out of the history.
  const count = bubble(b.page, 'which bundler').getByTestId('thread-count')
  await count.filter({ hasText: '1 reply' }).waitFor()
  expect(await bubble(b.page, 'Vite 吧').count()).toBe(0)
  await count.click()
  await thread(b.page).getByTestId('message').filter({ hasText: 'Vite 吧' }).waitFor()
  await thread(b.page).getByLabel('Reply in thread').fill('同意 agreed')
  await thread(b.page).getByLabel('Reply in thread').press('Enter')

  await thread(a.page).getByTestId('message').filter({ hasText: '同意 agreed' }).waitFor()
  await bubble(a.page, 'which bundler').getByTestId('thread-count').filter({ hasText: '2 replies' }).waitFor()
  expect(await panel(a.page).getByText('同意 agreed').count()).toBe(0)
  await web.shot(b.page, 'm2-thread')

  // Replying followed the thread for bob; the toggle unfollows it.
  const follow = thread(b.page).getByTestId('follow')
  await expect.poll(() => follow.getAttribute('aria-pressed')).toBe('true')
  await follow.click()
  await expect.poll(() => follow.getAttribute('aria-pressed')).toBe('false')
  const state = await bob.run(FollowState, { id: root.id })
  expect(state.node).toMatchObject({ thread: { replyCount: 2, viewerFollowing: false } })
  expect(web.failures).toEqual([])
  await Promise.all([a.context.close(), b.context.close()])
}, 90_000)

it('the menu forwards one message, merges a selection into one that opens as a dialog, copies, pins with a SYSTEM sentence', async () => {
  await send(alice, privateId, { text: { text: '第一条 first point' } })
  await send(alice, privateId, { text: { text: '第二条 second point' } })
  const [a, b] = await Promise.all([web.signedIn(alice), web.signedIn(bob)])
  await a.context.grantPermissions(['clipboard-read', 'clipboard-write'])
  await Promise.all([open(alice, a.page, bob.handle), open(bob, b.page, groupTitle)])

  await bubble(a.page, 'first point').locator('.bubble').click({ button: 'right' })
  await a.page.getByRole('menuitem', { name: 'Copy' }).click()
  expect(await a.page.evaluate(() => navigator.clipboard.readText())).toBe('第一条 first point')

  await bubble(a.page, 'first point').locator('.bubble').click({ button: 'right' })
  await a.page.getByRole('menuitem', { name: 'Forward' }).click()
  await a.page.getByRole('dialog', { name: 'Forward to' }).getByRole('button', { name: groupTitle }).click()
  await bubble(b.page, 'first point').waitFor()

  await bubble(a.page, 'first point').locator('.bubble').click({ button: 'right' })
  await a.page.getByRole('menuitem', { name: 'Multi-select' }).click()
  await a.page.getByLabel('Select: 第二条 second point').check()
  await a.page.getByRole('toolbar', { name: 'Selected messages' }).filter({ hasText: '2 selected' }).waitFor()
  await web.shot(a.page, 'm3-multi-select')
  await a.page.getByRole('button', { name: 'Merged forward' }).click()
  await a.page.getByRole('dialog', { name: 'Merged forward to' }).getByRole('button', { name: groupTitle }).click()
  await expect.poll(() => a.page.getByRole('toolbar', { name: 'Selected messages' }).count()).toBe(0)

  const merged = b.page.getByTestId('merged')
  await merged.waitFor()
  await merged.click()
  const dialog = b.page.getByRole('dialog')
  await dialog.getByText('第一条 first point').waitFor()
  await dialog.getByText('第二条 second point').waitFor()
  expect(await dialog.locator('li').count()).toBe(2)
  await web.shot(b.page, 'm4-merged-forward')
  await dialog.getByRole('button', { name: 'Close' }).click()

  // Alice owns the group: she pins bob's copy, and both see the SYSTEM sentence.
  await item(a.page, groupTitle).click()
  await bubble(a.page, 'first point').first().locator('.bubble').click({ button: 'right' })
  await a.page.getByRole('menuitem', { name: 'Pin' }).click()
  await b.page.locator('.system').filter({ hasText: 'Alice 陈 pinned a message' }).waitFor()
  await a.page.getByTestId('pinned').filter({ hasText: 'first point' }).waitFor()
  expect(web.failures).toEqual([])
  await Promise.all([a.context.close(), b.context.close()])
}, 90_000)

it('stickers: bob adds alice’s image to his stickers; a sticker message renders its image', async () => {
  const [a, b] = await Promise.all([web.signedIn(alice), web.signedIn(bob)])
  await Promise.all([open(alice, a.page, bob.handle), open(bob, b.page, alice.handle)])
  await a.page
    .getByTestId('file')
    .setInputFiles({ name: 'cat.png', mimeType: 'image/png', buffer: await pngOf(80, 80) })
  const image = b.page.getByTestId('image').last()
  await image.waitFor()
  await image.click({ button: 'right' })
  await b.page.getByRole('menuitem', { name: 'Add to stickers' }).click()
  await expect.poll(async () => (await bob.run(Stickers, { first: 5 })).viewer.stickers.edges.length).toBe(1)

  // A sticker's url is any http(s) image: here one the app's own origin serves.
  const url = new URL('/assets/sticker-wave.png', web.pageUrl).href
  await send(bob, privateId, { sticker: { stickerId: 'wave', url, label: '挥手 wave' } })
  const sticker = a.page.getByRole('img', { name: '挥手 wave' })
  await sticker.waitFor()
  await expect.poll(() => sticker.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBe(96)
  await web.shot(a.page, 'm5-sticker')
  expect(web.failures).toEqual([])
  await Promise.all([a.context.close(), b.context.close()])
}, 90_000)

it('cards show their buttons and the one pressed; a streamed reply grows live, then settles', async () => {
  const a = await web.signedIn(alice)
  await open(alice, a.page, groupTitle)
  await send(bob, groupId, {
    card: {
      cardType: 'leave_approval',
      data: { title: '请假审批 Leave request', text: 'Bob, 2 days', days: 2 },
      actions: [
        { id: 'approve', label: 'Approve', style: 'PRIMARY' },
        { id: 'reject', label: 'Reject', style: 'DANGER' },
        { id: 'open', label: 'Details', url: 'https://hr.example/leave/1' },
      ],
    },
  })
  const card = a.page.getByTestId('card').filter({ hasText: 'Leave request' })
  await card.getByRole('link', { name: 'Details' }).waitFor()
  await card.getByRole('button', { name: 'Approve' }).click()
  await card.getByRole('button', { name: '✓ Approve', pressed: true }).waitFor()
  await card.getByTestId('card-chosen').filter({ hasText: 'You chose Approve' }).waitFor()
  await web.shot(a.page, 'm6-card')

  const { message } = (await bob.run(StartStream, { conversationId: groupId, clientMessageId: randomUUID() }))
    .startStreamingMessage
  const streaming = a.page.getByTestId('streaming')
  await streaming.waitFor()
  await bob.run(Append, { messageId: message.id, sequence: 1, delta: '正在思考 ' })
  await streaming.filter({ hasText: '正在思考' }).waitFor()
  await bob.run(Append, { messageId: message.id, sequence: 2, delta: 'the answer is' })
  await streaming.filter({ hasText: '正在思考 the answer is' }).waitFor()
  await web.shot(a.page, 'm7-streaming')
  await bob.run(Finish, { messageId: message.id, text: '正在思考 the answer is 42.' })
  await bubble(a.page, 'the answer is 42.').waitFor()
  await expect.poll(() => streaming.count()).toBe(0)
  expect(web.failures).toEqual([])
  expect(web.elsewhere).toEqual([])
  await a.context.close()
}, 90_000)
