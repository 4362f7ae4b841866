import { defineConfig } from 'vitest/config'
import base from './vitest.config.ts'

/**
 * `npm run test:browser`: GraphiQL in headless Chromium (Debian's /usr/bin/chromium). Its files are
 * named *.browser.ts, so `npm test` (test/**\/*.test.ts) runs without a browser.
 */
export default defineConfig({ ...base, test: { ...base.test, include: ['test/browser/**/*.browser.ts'] } })
