import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'
import { CHROMIUM_OPTIONS } from './chromium.ts'
import { build } from 'vite'
import { PROJECT_ROOT } from '../../src/lib/projectRoot.ts'
import { AUTH_SECRET, type TestUser } from './harness.ts'
import { startServer, type TestServer } from './server.ts'

/** Debian's chromium package (`apt-get install chromium`); nothing is downloaded. */
/** Screenshots of each screen, for review (tmp/ is not committed). */
const SHOTS = path.join(PROJECT_ROOT, 'tmp', 'workbench-screens')

/** The workbench (web/) built into a temporary folder, served by a started Parley, and a headless Chromium. */
export type Workbench = {
  server: TestServer
  /** The app's page, on an IP: no name resolution, which the browser's flags cut. */
  pageUrl: string
  /** Requests to any other host (aborted), and errors thrown in a page: each test expects none. */
  elsewhere: string[]
  failures: string[]
  /** First paint of the sign-in screen (cold context) and the list's first render after it. */
  timings: { user: string; signInPaintMs: number; listAfterSignInMs: number }[]
  /** A browser context of its own (storage, socket) per user, signed in through the page. */
  signedIn(user: TestUser): Promise<{ context: BrowserContext; page: Page }>
  shot(page: Page, name: string): Promise<Buffer>
  /**
   * Until no GraphQL request of the page is in flight: a query answer that started before a change
   * and lands after its event would show the older state (Graphcache keeps the last write).
   */
  settled(page: Page): Promise<void>
  close(): Promise<void>
}

/** `assets`: more files the app's own origin serves under /assets/ (the server lists its files when it starts). */
export async function startWorkbench(assets: Record<string, Buffer> = {}): Promise<Workbench> {
  const webDir = mkdtempSync(path.join(tmpdir(), 'parley-web-'))
  await build({
    configFile: path.join(PROJECT_ROOT, 'web', 'vite.config.ts'),
    build: { outDir: webDir },
    logLevel: 'silent',
  })
  for (const [name, bytes] of Object.entries(assets)) writeFileSync(path.join(webDir, 'assets', name), bytes)
  const server = await startServer(undefined, { webApp: { dir: webDir, devTokenSecret: AUTH_SECRET } })
  const pageUrl = new URL('/', server.url.replace('//localhost:', '//127.0.0.1:')).href
  mkdirSync(SHOTS, { recursive: true })
  const browser: Browser = await chromium.launch(CHROMIUM_OPTIONS)
  const inFlight = new WeakMap<Page, Set<unknown>>()
  const workbench: Workbench = {
    server,
    pageUrl,
    elsewhere: [],
    failures: [],
    timings: [],
    async signedIn(user) {
      const context = await browser.newContext({ viewport: { width: 1100, height: 700 } })
      const origin = new URL(pageUrl).origin
      await context.route(
        (url) => url.origin !== origin,
        (route) => {
          workbench.elsewhere.push(route.request().url())
          return route.abort('blockedbyclient')
        },
      )
      const page = await context.newPage()
      const pending = new Set<unknown>()
      inFlight.set(page, pending)
      page.on('request', (r) => r.url().endsWith('/graphql') && pending.add(r))
      page.on('requestfinished', (r) => pending.delete(r))
      page.on('requestfailed', (r) => pending.delete(r))
      page.on('pageerror', (error) => workbench.failures.push(`${user.handle}: ${error.message}`))
      await page.goto(pageUrl)
      await page.getByLabel('Handle').waitFor()
      const paint = await page.evaluate(() => performance.getEntriesByName('first-contentful-paint')[0]?.startTime)
      await page.getByLabel('Handle').fill(user.handle)
      await page.getByRole('button', { name: 'Sign in' }).click()
      await page
        .getByTestId('me')
        .filter({ hasText: `@${user.handle}` })
        .waitFor()
      await page.locator('[role="option"]').first().waitFor()
      const list = await page.evaluate(() => performance.getEntriesByName('parley:first-list')[0]?.startTime)
      workbench.timings.push({
        user: user.handle,
        signInPaintMs: Math.round(paint ?? -1),
        listAfterSignInMs: Math.round(list ?? -1),
      })
      return { context, page }
    },
    async settled(page) {
      // Twice idle a moment apart: an answer may set off the next request (a refetch after an event).
      for (let idle = 0; idle < 2;) {
        await new Promise((resolve) => setTimeout(resolve, 150))
        idle = inFlight.get(page)!.size ? 0 : idle + 1
      }
    },
    shot: (page, name) => page.screenshot({ path: path.join(SHOTS, `${name}.png`) }),
    async close() {
      await browser.close()
      await server.close()
      rmSync(webDir, { recursive: true, force: true })
    },
  }
  return workbench
}
