import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { WebhookWorker } from '../../src/domain/webhooks/index.ts'
import { freePort } from '../../src/lib/ports.ts'
import { newUsers, testApp } from '../support/harness.ts'
import { createGroup, sendText } from '../support/operations.ts'
import { CreateWebhook, startTestWorker } from '../support/webhooks.ts'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

let worker: WebhookWorker
beforeAll(() => {
  worker = startTestWorker(testApp().app)
})
afterAll(() => worker.stop())

describe('docs/webhooks.md', () => {
  it('its receiver verifies and prints a delivery', async () => {
    const doc = readFileSync(`${ROOT}docs/webhooks.md`, 'utf8')
    const code = /<!-- receiver -->\n```js\n([\s\S]*?)```/.exec(doc)![1]!
    expect(code.trim().split('\n').length).toBeLessThanOrEqual(20)
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    const port = await freePort('127.0.0.1')
    const { secret } = (
      await bob!.run(CreateWebhook, { input: { url: `http://127.0.0.1:${port}/`, events: ['MESSAGE_ADDED'] } })
    ).createWebhook
    const child = spawn(process.execPath, ['--input-type=module', '-e', code], {
      cwd: ROOT,
      env: { ...process.env, PARLEY_WEBHOOK_SECRET: secret, PORT: String(port) },
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    try {
      let output = ''
      const printed = new Promise<void>((resolve) =>
        child.stdout.on('data', (d) => {
          output += d
          if (output.includes('\n')) resolve()
        }),
      )
      // The worker retries until the receiver listens.
      await sendText(alice!, group.id, 'hello receiver')
      await printed
      expect(output).toBe('message.added hello receiver\n')
    } finally {
      child.kill('SIGKILL')
    }
  })
})
