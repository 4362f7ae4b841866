import { randomUUID } from 'node:crypto'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { insertMessages } from '../../bench/setup.ts'
import { parseId } from '../../src/domain/core/ids.ts'
import { newUser, type TestUser } from '../support/harness.ts'
import { withDatabase } from '../support/database.ts'
import { OpenPrivate, SendMessage } from '../support/operations.ts'
import { UpdateSettings } from '../support/settings.ts'
import { startWorkbench, type Workbench } from '../support/workbench.ts'

/**
 * The workbench's input bar (emoji, voice, video, files), search, jumps (to a search hit, to the
 * first unread), scrolling back through 100,000 messages, and keyboard use, in headless Chromium.
 */
let wb: Workbench
let alice: TestUser
let bob: TestUser
let conversationId: string

/** A WAV of silence: 8 kHz, 8-bit mono (what the server sniffs as audio/wav, and Chromium plays). */
function wavOf(seconds: number): Buffer {
  const samples = 8000 * seconds
  const header = Buffer.alloc(44)
  header.write('RIFF', 0)
  header.writeUInt32LE(36 + samples, 4)
  header.write('WAVEfmt ', 8)
  header.writeUInt32LE(16, 16)
  header.writeUInt16LE(1, 20)
  header.writeUInt16LE(1, 22)
  header.writeUInt32LE(8000, 24)
  header.writeUInt32LE(8000, 28)
  header.writeUInt16LE(1, 32)
  header.writeUInt16LE(8, 34)
  header.write('data', 36)
  header.writeUInt32LE(samples, 40)
  return Buffer.concat([header, Buffer.alloc(samples, 128)])
}

/** Records a second of a canvas with MediaRecorder in the page and hands it to the file input, as a picked file. */
async function attachRecordedVideo(page: Page) {
  await page.getByTestId('file').evaluate(async (input: HTMLInputElement) => {
    const canvas = Object.assign(document.createElement('canvas'), { width: 160, height: 120 })
    const paint = canvas.getContext('2d')!
    const recorder = new MediaRecorder(canvas.captureStream(15), { mimeType: 'video/webm' })
    const chunks: Blob[] = []
    recorder.ondataavailable = (event) => chunks.push(event.data)
    const stopped = new Promise((resolve) => (recorder.onstop = resolve))
    let frame = 0
    const timer = setInterval(() => {
      paint.fillStyle = `hsl(${(frame++ * 30) % 360} 80% 50%)`
      paint.fillRect(0, 0, 160, 120)
    }, 60)
    recorder.start()
    await new Promise((resolve) => setTimeout(resolve, 1000))
    recorder.stop()
    await stopped
    clearInterval(timer)
    const files = new DataTransfer()
    files.items.add(new File(chunks, 'clip.webm', { type: 'video/webm' }))
    input.files = files.files
    input.dispatchEvent(new Event('change'))
  })
}

const send = (user: TestUser, id: string, text: string) =>
  user.run(SendMessage, { input: { conversationId: id, clientMessageId: randomUUID(), content: { text: { text } } } })
const item = (page: Page, name: string) => page.locator(`[data-conversation="${name}"]`)
const message = (page: Page, text: string) => page.getByTestId('message').filter({ hasText: text })
const input = (page: Page) => page.getByLabel('Message', { exact: true })
/** Scrolls the message panel to its top and waits for `text`, which only an older page or window holds. */
async function scrollUpTo(page: Page, text: string) {
  await page.locator('.messages').evaluate((el) => el.scrollTo({ top: 0 }))
  await message(page, text).waitFor()
}

beforeAll(async () => {
  wb = await startWorkbench()
  ;[alice, bob] = await Promise.all([
    newUser({ prefix: 'alice', name: 'Alice 陈' }),
    newUser({ prefix: 'bob', name: 'Bob Li' }),
  ])
  conversationId = (await alice.run(OpenPrivate, { userId: bob.id })).openPrivateConversation.id
}, 120_000)

afterAll(async () => {
  await wb?.close()
})

it('the input bar: an emoji from the picker, Shift+Enter and Enter; a voice message, a video and a file play or download for bob', async () => {
  const [a, b] = await Promise.all([wb.signedIn(alice), wb.signedIn(bob)])
  await item(a.page, bob.handle).click()
  await item(b.page, alice.handle).click()

  await input(a.page).fill('好的 ')
  await a.page.getByRole('button', { name: 'Emoji' }).click()
  const picker = a.page.getByRole('dialog', { name: 'Emoji' })
  await picker.waitFor()
  await wb.shot(a.page, 'nav-1-emoji-picker')
  // The picker takes focus: arrows move through it, Enter picks, and the box gets focus back.
  await expect
    .poll(() => picker.getByRole('button', { name: 'grinning' }).evaluate((e) => e === document.activeElement))
    .toBe(true)
  await a.page.keyboard.press('ArrowRight')
  await a.page.keyboard.press('Enter')
  expect(await picker.count()).toBe(0)
  expect(await input(a.page).inputValue()).toBe('好的 😂')
  await input(a.page).press('Shift+Enter')
  await input(a.page).pressSequentially('see you')
  await input(a.page).press('Enter')
  await message(b.page, '好的 😂\nsee you').waitFor()

  await a.page.getByTestId('file').setInputFiles({ name: 'voice.wav', mimeType: 'audio/wav', buffer: wavOf(1) })
  const audio = b.page.locator('audio')
  await audio.waitFor()
  // Bob's browser reads the sound through its signed URL: one second of it.
  await expect
    .poll(() => audio.evaluate((el: HTMLAudioElement) => el.readyState >= 1 && Math.round(el.duration)))
    .toBe(1)

  await attachRecordedVideo(a.page)
  const video = b.page.locator('video')
  await video.waitFor({ timeout: 15_000 })
  await expect.poll(() => video.evaluate((el: HTMLVideoElement) => el.readyState >= 1 && el.videoWidth)).toBe(160)

  await a.page
    .getByTestId('file')
    .setInputFiles({ name: '周报 notes.txt', mimeType: 'text/plain', buffer: Buffer.from('第一周 week one') })
  const link = b.page.locator('a.file', { hasText: '周报 notes.txt' })
  await link.waitFor()
  expect(await link.getAttribute('download')).not.toBeNull()
  const body = await link.evaluate(async (a: HTMLAnchorElement) => (await fetch(a.href)).text())
  expect(body).toBe('第一周 week one')
  await wb.shot(b.page, 'nav-2-media')
  expect(wb.failures).toEqual([])
  await Promise.all([a.context.close(), b.context.close()])
}, 120_000)

it('search finds Chinese and English with highlights built from ranges (markup stays text), and opens the conversation at the hit', async () => {
  await send(alice, conversationId, '明天请假一天, day off tomorrow <b>not bold</b>')
  // Enough after it that the hit is not in the newest page: opening at it takes messagesAround.
  for (let n = 1; n <= 35; n++) await send(alice, conversationId, `filler ${n}`)
  const b = await wb.signedIn(bob)
  const box = b.page.getByLabel('Search messages')
  await box.fill('请假')
  await box.press('Enter')
  const hit = b.page.getByTestId('search-result').filter({ hasText: '明天请假一天' })
  await hit.waitFor()
  expect(await hit.locator('mark').allInnerTexts()).toEqual(['请假'])
  // The text's markup is shown as text, never parsed.
  expect(await hit.locator('b').count()).toBe(0)
  expect(await hit.innerText()).toContain('<b>not bold</b>')
  await wb.shot(b.page, 'nav-3-search-chinese')

  await box.fill('tomorrow')
  await box.press('Enter')
  await expect.poll(() => hit.locator('mark').allInnerTexts()).toEqual(['tomorrow'])
  await wb.shot(b.page, 'nav-4-search-english')

  await hit.click()
  const target = message(b.page, '明天请假一天')
  await target.and(b.page.locator('.target')).waitFor()
  await expect.poll(() => target.isVisible()).toBe(true)
  // messagesAround's window, not the newest page: the newest filler is not there until asked for.
  expect(await message(b.page, 'filler 35').count()).toBe(0)
  await wb.shot(b.page, 'nav-5-search-opened')
  await b.page.getByRole('button', { name: '↓ Jump to latest' }).click()
  await message(b.page, 'filler 35').waitFor()
  expect(wb.failures).toEqual([])
  await b.context.close()
}, 120_000)

it('100,000 messages: jump to the first unread and slide back from it, then scroll back from the newest a page at a time, loading only those pages', async () => {
  const [carol, dave] = await Promise.all([
    newUser({ prefix: 'carol', name: 'Carol Wang' }),
    newUser({ prefix: 'dave', name: 'Dave 王' }),
  ])
  const id = (await carol.run(OpenPrivate, { userId: dave.id })).openPrivateConversation.id
  const key = parseId(id, 'Conversation')
  await withDatabase(async (client) => {
    await insertMessages(client, key, parseId(carol.id, 'User'), 100_000)
    await client.query(
      'UPDATE conversation_members SET last_read_seq = 50000 WHERE conversation_id = $1 AND user_id = $2',
      [key, parseId(dave.id, 'User')],
    )
  })
  const d = await wb.signedIn(dave)
  const chatRequests: string[] = []
  d.page.on('request', (request) => {
    const body = request.postData() ?? ''
    if (body.includes('"operationName":"Chat"')) chatRequests.push(body)
  })
  await item(d.page, carol.handle).click()
  await message(d.page, 'message 100000').waitFor()
  const bubbles = d.page.getByTestId('message')

  await d.page.getByRole('button', { name: '↑ Jump to first unread' }).click()
  await message(d.page, 'message 50001').waitFor()
  await d.page.getByTestId('first-unread').waitFor()
  await wb.shot(d.page, 'nav-6-first-unread')
  await scrollUpTo(d.page, 'message 49980')
  await scrollUpTo(d.page, 'message 49960')
  // A sliding window: what scrolled away was dropped.
  expect(await bubbles.count()).toBeLessThanOrEqual(40)

  await d.page.getByRole('button', { name: '↓ Jump to latest' }).click()
  await message(d.page, 'message 100000').waitFor()
  await expect.poll(() => bubbles.count()).toBe(30)
  for (const oldest of [99_941, 99_911, 99_881]) await scrollUpTo(d.page, `message ${oldest}`)
  await wb.shot(d.page, 'nav-7-scrolled-back')
  expect(await bubbles.count()).toBe(120)
  // The first page and one per scroll (a refetch of a page already shown at most once more).
  expect(chatRequests.length).toBeGreaterThanOrEqual(4)
  expect(chatRequests.length).toBeLessThanOrEqual(5)
  expect(wb.failures).toEqual([])
  await d.context.close()
}, 180_000)

it('keyboard: arrows and Enter through the list, the context menu with arrows and Escape; icon buttons are labelled; pinned first, archived folded away', async () => {
  const [erin, frank] = await Promise.all([
    newUser({ prefix: 'erin', name: 'Erin 赵' }),
    newUser({ prefix: 'frank', name: 'Frank Wu' }),
  ])
  for (const other of [erin, frank]) {
    const { openPrivateConversation } = await other.run(OpenPrivate, { userId: bob.id })
    await send(other, openPrivateConversation.id, `hello from ${other.handle}`)
    const input = other === erin ? { pinned: true } : { archived: true }
    await bob.run(UpdateSettings, { id: openPrivateConversation.id, input })
  }
  const b = await wb.signedIn(bob)
  const list = b.page.getByRole('listbox', { name: 'Conversations', exact: true }).getByRole('option')
  await list.first().waitFor()
  expect(await list.first().getAttribute('data-conversation')).toBe(erin.handle)
  await list.first().getByRole('img', { name: 'pinned' }).waitFor()
  expect(await item(b.page, frank.handle).isVisible()).toBe(false)
  await b.page.getByText('Archived', { exact: true }).click()
  await item(b.page, frank.handle).waitFor()
  await wb.shot(b.page, 'nav-8-pinned-archived')

  await list.first().focus()
  await b.page.keyboard.press('ArrowDown')
  expect(await list.nth(1).evaluate((e) => e === document.activeElement)).toBe(true)
  expect(await list.nth(1).getAttribute('data-conversation')).toBe(alice.handle)
  await b.page.keyboard.press('Enter')
  await b.page.getByRole('heading', { name: 'Alice 陈' }).waitFor()

  const bubble = message(b.page, 'filler 35').locator('.bubble')
  await bubble.focus()
  await b.page.keyboard.press('Shift+F10')
  const items = b.page.getByRole('menu').getByRole('menuitem')
  await expect.poll(() => items.first().evaluate((e) => e === document.activeElement)).toBe(true)
  await b.page.keyboard.press('ArrowDown')
  expect(await items.nth(1).evaluate((e) => e === document.activeElement)).toBe(true)
  await wb.shot(b.page, 'nav-9-menu-keyboard')
  await b.page.keyboard.press('Escape')
  expect(await b.page.getByRole('menu').count()).toBe(0)
  expect(await bubble.evaluate((e) => e === document.activeElement)).toBe(true)

  // Every button says what it does: its text, or a label when it shows only a symbol.
  const unlabelled = await b.page
    .locator('button')
    .evaluateAll((buttons) =>
      buttons
        .filter((e) => !e.getAttribute('aria-label') && !/\p{L}/u.test(e.textContent ?? ''))
        .map((e) => e.outerHTML),
    )
  expect(unlabelled).toEqual([])
  // A conversation that starts while the list is shown joins it (the list is asked for again).
  const gina = await newUser({ prefix: 'gina', name: 'Gina Xu' })
  const { openPrivateConversation } = await gina.run(OpenPrivate, { userId: bob.id })
  await send(gina, openPrivateConversation.id, 'new here 新来的')
  await item(b.page, gina.handle).filter({ hasText: 'new here 新来的' }).waitFor()
  expect(wb.failures).toEqual([])
  expect(wb.elsewhere).toEqual([])
  await b.context.close()
}, 120_000)
