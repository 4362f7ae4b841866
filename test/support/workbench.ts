import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'
import { build } from 'vite'
import { PROJECT_ROOT } from '../../src/lib/projectRoot.ts'
import { AUTH_SECRET, type TestUser } from './harness.ts'
import { startServer, type TestServer } from './server.ts'

/** Debian's chromium package (`apt-get install chromium`); nothing is downloaded. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'

/** The built workbench served by a test server, and a headless Chromium to open it in. */
export type Workbench = {
  server: TestServer
  pageUrl: string
  browser: Browser
  /** Requests to any other host (blocked): the app must make none. */
  elsewhere: string[]
  /** Uncaught errors in any page. */
  failures: string[]
  /** Screenshots go to tmp/<shots>/ (tmp/ is not committed), for review. */
  shot(page: Page, name: string): Promise<unknown>
  close(): Promise<void>
}

export async function startWorkbench(shots: string, chromiumArgs: string[] = []): Promise<Workbench> {
  const webDir = mkdtempSync(path.join(tmpdir(), 'parley-web-'))
  await build({
    configFile: path.join(PROJECT_ROOT, 'web', 'vite.config.ts'),
    build: { outDir: webDir },
    logLevel: 'silent',
  })
  const server = await startServer(undefined, { webApp: { dir: webDir, devTokenSecret: AUTH_SECRET } })
  // An IP needs no name resolution, which the flag below cuts.
  const pageUrl = new URL('/', server.url.replace('//localhost:', '//127.0.0.1:')).href
  const shotDir = path.join(PROJECT_ROOT, 'tmp', shots)
  mkdirSync(shotDir, { recursive: true })
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
      ...chromiumArgs,
    ],
  })
  return {
    server,
    pageUrl,
    browser,
    elsewhere: [],
    failures: [],
    shot: (page, name) => page.screenshot({ path: path.join(shotDir, `${name}.png`) }),
    async close() {
      await browser.close()
      await server.close()
      rmSync(webDir, { recursive: true, force: true })
    },
  }
}

/** A browser context of its own (storage, socket) per user, signed in through the page. */
export async function signedIn(wb: Workbench, user: TestUser): Promise<{ context: BrowserContext; page: Page }> {
  const context = await wb.browser.newContext({ viewport: { width: 1100, height: 700 } })
  const origin = new URL(wb.pageUrl).origin
  await context.route(
    (url) => url.origin !== origin,
    (route) => {
      wb.elsewhere.push(route.request().url())
      return route.abort('blockedbyclient')
    },
  )
  const page = await context.newPage()
  page.on('pageerror', (error) => wb.failures.push(`${user.handle}: ${error.message}`))
  await page.goto(wb.pageUrl)
  await page.getByLabel('Handle').fill(user.handle)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page
    .getByTestId('me')
    .filter({ hasText: `@${user.handle}` })
    .waitFor()
  return { context, page }
}

/** A conversation's row in the list, by its peer's handle or its title. */
export const item = (page: Page, name: string) => page.locator(`[data-conversation="${name}"]`)
