import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { chromium, type BrowserContext } from 'playwright-core'
import { CHROMIUM_OPTIONS } from '../support/chromium.ts'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { DEV_USER } from '../../src/http/graphiql.ts'
import { startServer, type TestServer } from '../support/server.ts'

/** Debian's chromium package (`apt-get install chromium`); nothing is downloaded. */

let server: TestServer
/** startServer listens on 127.0.0.1; an IP needs no name resolution, which the flags below cut. */
let pageUrl: string
let context: BrowserContext
let profile: string
/** Requests the page tried to send anywhere but this server (aborted before they left). */
const elsewhere: string[] = []

beforeAll(async () => {
  server = await startServer()
  pageUrl = server.url.replace('//localhost:', '//127.0.0.1:')
  profile = mkdtempSync(path.join(tmpdir(), 'parley-chromium-'))
  context = await chromium.launchPersistentContext(profile, CHROMIUM_OPTIONS)
  const origin = new URL(pageUrl).origin
  await context.route(
    (url) => url.origin !== origin,
    (route) => {
      elsewhere.push(route.request().url())
      return route.abort('blockedbyclient')
    },
  )
})

afterAll(async () => {
  await context?.close()
  if (profile) rmSync(profile, { recursive: true, force: true })
  await server?.close()
})

it(`GraphiQL loads offline, fetches the schema with its prefilled header and shows ${DEV_USER}'s handle`, async () => {
  const page = await context.newPage()
  const failures: string[] = []
  page.on('pageerror', (error) => failures.push(`page error: ${error.message}`))
  context.on('response', (response) => {
    if (response.status() >= 400) failures.push(`${response.status()} ${response.request().method()} ${response.url()}`)
  })
  const [schemaFetch] = await Promise.all([
    page.waitForResponse((r) => r.request().method() === 'POST' && /__schema/.test(r.request().postData() ?? '')),
    page.goto(pageUrl),
  ])
  expect(schemaFetch.status()).toBe(200)

  const editor = page.locator('.graphiql-query-editor .monaco-editor').first()
  await editor.click()
  await page.keyboard.press('ControlOrMeta+A')
  await page.keyboard.press('Delete')
  await page.keyboard.insertText('{ viewer { user { handle } } }')
  await page.keyboard.press('ControlOrMeta+Enter')

  await page
    .locator('.result-window')
    .filter({ hasText: new RegExp(`"handle":\\s*"${DEV_USER}"`) })
    .waitFor()
  const shown = (await page.locator('.result-window').innerText()).replace(/\s+/g, '')
  expect(JSON.parse(shown)).toEqual({ data: { viewer: { user: { handle: DEV_USER } } } })
  expect(failures).toEqual([])
  expect(elsewhere).toEqual([])
})
