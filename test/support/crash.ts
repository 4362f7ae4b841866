import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import { inject } from 'vitest'
import { parseId } from '../../src/domain/core/ids.ts'
import type { TestUser } from './harness.ts'

/**
 * Runs send-crash.ts: `sender` sends 'sent just before the crash' to `conversationId` in a process
 * that kills itself with SIGKILL right after the commit. Resolves with how that process ended.
 */
export async function sendThenCrash(
  sender: TestUser,
  conversationId: string,
  env: Record<string, string> = {},
): Promise<unknown[]> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/send-crash.ts'], {
    cwd: fileURLToPath(new URL('../..', import.meta.url)),
    env: {
      ...process.env,
      ...env,
      DATABASE_URL: inject('databaseUrl'),
      SENDER_ID: String(parseId(sender.id, 'User')),
      SENDER_HANDLE: sender.handle,
      CONVERSATION_ID: conversationId,
    },
    stdio: 'ignore',
  })
  return once(child, 'exit')
}
