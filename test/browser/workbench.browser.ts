import { randomUUID } from 'node:crypto'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { newUser, type TestUser } from '../support/harness.ts'
import { CreateGroup, OpenPrivate, SendMessage } from '../support/operations.ts'
import { graphql } from '../gql/index.ts'
import { pngOf } from '../support/files.ts'
import { startWorkbench, type Workbench } from '../support/workbench.ts'

let web: Workbench
let alice: TestUser
let bob: TestUser
let conversationId: string
const signedIn = (user: TestUser) => web.signedIn(user)

const DraftOf = graphql(`
  query WorkbenchDraft($id: ID!) {
    conversation(id: $id) {
      id
      viewerSettings {
        draft {
          text
        }
      }
    }
  }
`)
const draftOf = async (user: TestUser) =>
  (await user.run(DraftOf, { id: conversationId })).conversation?.viewerSettings.draft?.text ?? null

/** The message with the mention (the quote reply below repeats its text). */
const mentionOf = (page: Page) => page.getByTestId('message').filter({ hasText: 'please review', hasNotText: 'on it' })
const item = (page: Page, handle: string) => page.locator(`[data-conversation="${handle}"]`)
const shot = (page: Page, name: string) => web.shot(page, name)

beforeAll(async () => {
  web = await startWorkbench()
  ;[alice, bob] = await Promise.all([
    newUser({ prefix: 'alice', name: 'Alice 陈' }),
    newUser({ prefix: 'bob', name: 'Bob Li' }),
  ])
  conversationId = (await alice.run(OpenPrivate, { userId: bob.id })).openPrivateConversation.id
}, 120_000)

afterAll(async () => {
  console.log('workbench first-screen timings (ms since navigation):', JSON.stringify(web?.timings))
  await web?.close()
})

it('alice and bob chat live: the message appears with an unread dot and an alert, and her tail turns to read', async () => {
  const [a, b] = await Promise.all([signedIn(alice), signedIn(bob)])
  await item(a.page, bob.handle).click()
  await shot(b.page, '1-list')

  await a.page.getByLabel('Message', { exact: true }).fill('你好 Bob, the release is out')
  await a.page.getByLabel('Message', { exact: true }).press('Enter')
  const mine = a.page.getByTestId('message').filter({ hasText: 'the release is out' })
  await expect.poll(() => mine.getByTestId('tail').innerText()).toBe('Unread')

  // Bob did not open the conversation: the list shows the preview, the unread dot, and an alert.
  const conversation = item(b.page, alice.handle)
  await conversation.filter({ hasText: '你好 Bob, the release is out' }).waitFor()
  expect(await conversation.getByTestId('unread').innerText()).toBe('1')
  await b.page.getByTestId('alert').filter({ hasText: 'the release is out' }).waitFor()
  await shot(b.page, '2-unread')

  await conversation.click()
  await b.page.getByTestId('message').filter({ hasText: 'the release is out' }).waitFor()
  await expect.poll(() => conversation.getByTestId('unread').count()).toBe(0)
  await expect.poll(() => mine.getByTestId('tail').innerText()).toBe('Read')
  await shot(a.page, '3-read')

  // Alice sees bob typing; Shift+Enter breaks the line; Enter sends both lines as one message.
  const input = b.page.getByLabel('Message', { exact: true })
  await input.fill('line one')
  await a.page.getByTestId('typing').filter({ hasText: 'Bob Li is typing' }).waitFor()
  await input.press('Shift+Enter')
  await input.pressSequentially('第二行')
  await input.press('Enter')
  await a.page.getByTestId('message').filter({ hasText: 'line one\n第二行' }).waitFor()
  expect(web.failures).toEqual([])
  await Promise.all([a.context.close(), b.context.close()])
}, 90_000)

it('an image alice uploads renders for bob; recall replaces the bubble on both sides', async () => {
  const [a, b] = await Promise.all([signedIn(alice), signedIn(bob)])
  await item(a.page, bob.handle).click()
  await item(b.page, alice.handle).click()

  await a.page
    .getByTestId('file')
    .setInputFiles({ name: 'red.png', mimeType: 'image/png', buffer: await pngOf(64, 48) })
  const image = b.page.getByTestId('image')
  await image.waitFor()
  await expect
    .poll(() => image.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth))
    .toBeGreaterThan(0)
  await shot(b.page, '4-image')

  await a.page.getByLabel('Message', { exact: true }).fill('a message to take back')
  await a.page.getByLabel('Message', { exact: true }).press('Enter')
  const sent = a.page.getByTestId('message').filter({ hasText: 'a message to take back' })
  await b.page.getByTestId('message').filter({ hasText: 'a message to take back' }).waitFor()
  await sent.locator('.bubble').click({ button: 'right' })
  await shot(a.page, '5-menu')
  await a.page.getByRole('menuitem', { name: 'Recall' }).click()
  await expect.poll(() => b.page.getByText('a message to take back').count()).toBe(0)
  await b.page.getByTestId('recalled').filter({ hasText: 'recalled a message' }).waitFor()
  await a.page.getByTestId('recalled').filter({ hasText: 'You recalled a message' }).waitFor()
  expect(web.failures).toEqual([])
  await Promise.all([a.context.close(), b.context.close()])
}, 90_000)

it('a draft survives a reload with its marker; do-not-disturb shows its dot and silences the alert', async () => {
  const b = await signedIn(bob)
  await item(b.page, alice.handle).click()
  await b.page.getByLabel('Message', { exact: true }).fill('半句话 half a thought')
  // Saved after a pause in typing; the reload shows it from the server.
  await expect.poll(() => draftOf(bob), { timeout: 5000 }).toBe('半句话 half a thought')
  await b.page.reload()
  await item(b.page, alice.handle).filter({ hasText: '[Draft] 半句话 half a thought' }).waitFor()
  await shot(b.page, '6-draft')
  await item(b.page, alice.handle).click()
  await expect.poll(() => b.page.getByLabel('Message', { exact: true }).inputValue()).toBe('半句话 half a thought')

  await b.page.getByTestId('dnd').click()
  await item(b.page, alice.handle).locator('.dnd-dot').waitFor()
  // Back to the list: a message under do-not-disturb updates it, with a grey dot and no alert.
  await b.page.reload()
  await alice.run(SendMessage, {
    input: { conversationId, clientMessageId: randomUUID(), content: { text: { text: 'quietly 悄悄' } } },
  })
  await item(b.page, alice.handle).locator('.unread-dot.muted').waitFor()
  expect(await b.page.getByTestId('alert').count()).toBe(0)
  await shot(b.page, '7-do-not-disturb')
  expect(web.failures).toEqual([])
  expect(web.elsewhere).toEqual([])
  await b.context.close()
}, 90_000)

it('in a group: the @ picker mentions bob, who sees it highlighted; "1 read" lists him; a quote reply; a pin', async () => {
  const title = `发布小组 Launch ${alice.handle.slice(-4)}`
  await alice.run(CreateGroup, { input: { title, memberIds: [bob.id] } })
  const [a, b] = await Promise.all([signedIn(alice), signedIn(bob)])
  await item(a.page, title).click()
  await item(b.page, title).click()

  const input = a.page.getByLabel('Message', { exact: true })
  await input.fill('请看 @Bo')
  await a.page.getByRole('option', { name: '@Bob Li' }).waitFor()
  await shot(a.page, '8-mention-picker')
  await input.press('Enter')
  expect(await input.inputValue()).toBe('请看 @Bob Li ')
  await input.pressSequentially('please review')
  await input.press('Enter')

  const forBob = mentionOf(b.page)
  await forBob.and(b.page.locator('.mentioned')).waitFor()
  expect(await forBob.locator('.mention').innerText()).toBe('@Bob Li')
  await shot(b.page, '9-mentioned')

  // Bob has the group open, so he reads it: alice's tail counts him, and lists him.
  const tail = mentionOf(a.page).getByTestId('tail')
  await expect.poll(() => tail.innerText()).toBe('1 read')
  await tail.click()
  await a.page.getByRole('dialog', { name: 'Read by' }).getByText('Bob Li').waitFor()
  await a.page.getByRole('button', { name: 'Close' }).click()

  await forBob.locator('.bubble').click({ button: 'right' })
  await b.page.getByRole('menuitem', { name: 'Quote reply' }).click()
  await b.page.getByLabel('Message', { exact: true }).fill('on it 马上')
  await b.page.getByLabel('Message', { exact: true }).press('Enter')
  await a.page
    .getByTestId('message')
    .filter({ hasText: 'on it 马上' })
    .locator('.quote', { hasText: 'please review' })
    .waitFor()

  await mentionOf(a.page).locator('.bubble').click({ button: 'right' })
  await a.page.getByRole('menuitem', { name: 'Pin' }).click()
  await a.page.getByTestId('pinned').filter({ hasText: 'please review' }).waitFor()
  await shot(a.page, '10-group')
  expect(web.failures).toEqual([])
  await Promise.all([a.context.close(), b.context.close()])
}, 90_000)

it('scrolling up loads one older page at a time, and the view stays where the reader was', async () => {
  const carol = await newUser({ prefix: 'carol', name: 'Carol Wang' })
  const { openPrivateConversation } = await carol.run(OpenPrivate, { userId: bob.id })
  for (let n = 1; n <= 70; n++)
    await carol.run(SendMessage, {
      input: {
        conversationId: openPrivateConversation.id,
        clientMessageId: randomUUID(),
        content: { text: { text: `history ${n}` } },
      },
    })
  const b = await signedIn(bob)
  await item(b.page, carol.handle).click()
  const bubbles = b.page.getByTestId('message')
  const inPanel = (text: string) => b.page.locator('.messages').getByText(text, { exact: true })
  await inPanel('history 70').waitFor()
  expect(await bubbles.count()).toBe(30)

  const scroller = b.page.locator('.messages')
  await scroller.evaluate((el) => el.scrollTo({ top: 0 }))
  await inPanel('history 11').waitFor()
  // One page came, above the view: the view moved down by its height instead of showing the oldest.
  expect(await bubbles.count()).toBe(60)
  await expect.poll(() => scroller.evaluate((el) => el.scrollTop)).toBeGreaterThan(500)
  await scroller.evaluate((el) => el.scrollTo({ top: 0 }))
  await inPanel('history 1').waitFor()
  expect(await bubbles.count()).toBe(70)
  await shot(b.page, '11-history')
  expect(web.failures).toEqual([])
  await b.context.close()
}, 120_000)
