import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { freePort } from '../../src/lib/ports.ts'
import { AUTH_SECRET } from '../support/harness.ts'

const root = path.resolve(import.meta.dirname, '../..')
const dataDir = mkdtempSync(path.join(tmpdir(), 'parley-startup-'))
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

/** `npm start`'s entry (or another script: `args`) as a child process with only `env` (and PATH); resolves when it exits. */
function startParley(
  env: Record<string, string | undefined>,
  args = ['src/main.ts'],
): Promise<{ code: number | null; lines: string[]; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', ...args], {
      cwd: root,
      env: { PATH: process.env.PATH, DATA_DIR: dataDir, AUTH_SECRET, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let output = ''
    child.stdout.on('data', (chunk) => (output += chunk))
    child.stderr.on('data', (chunk) => (output += chunk))
    // A start-up that should fail but serves instead would never exit.
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000)
    child.on('error', reject)
    child.on('exit', (code) => {
      clearTimeout(timer)
      resolve({ code, lines: output.split('\n').filter((line) => line.trim()), output })
    })
  })
}

/** Exit code 1 and exactly one line, which matches `expected`; no stack frame anywhere. */
async function expectOneLineFailure(
  env: Record<string, string | undefined>,
  expected: RegExp,
  script = { args: ['src/main.ts'], says: 'cannot start' },
) {
  const { code, lines, output } = await startParley(env, script.args)
  expect(output).not.toMatch(/^\s+at /m)
  expect(lines, output).toHaveLength(1)
  expect(lines[0]).toContain(`[parley] ${script.says}: `)
  expect(lines[0]).toMatch(expected)
  expect(code).toBe(1)
  return lines[0]!
}

describe('start-up errors: one line, what is wrong and what to set, exit code 1', () => {
  it.concurrent('a short AUTH_SECRET (its value is not printed)', async () => {
    const line = await expectOneLineFailure(
      { AUTH_SECRET: 'too-short-a-secret' },
      /AUTH_SECRET must be at least 32 characters/,
    )
    expect(line).not.toContain('too-short-a-secret')
  })

  it.concurrent('a PORT that is not a number, and a bad boolean in the same line', async () => {
    await expectOneLineFailure(
      { PORT: 'abc', SEND_COALESCING: 'yes' },
      /PORT="abc" must be a whole number from 0 to 65535; SEND_COALESCING="yes" must be one of true, false/,
    )
  })

  it.concurrent('npm run token and npm run seed with a bad environment say it the same way', async () => {
    await expectOneLineFailure({ AUTH_SECRET: 'too-short-a-secret' }, /AUTH_SECRET must be at least 32 characters/, {
      args: ['scripts/token.ts', 'alice'],
      says: 'cannot mint a token',
    })
    await expectOneLineFailure({ PORT: 'abc' }, /PORT="abc" must be a whole number/, {
      args: ['scripts/seed.ts'],
      says: 'cannot seed',
    })
  })

  it.concurrent('production without AUTH_SECRET', async () => {
    await expectOneLineFailure(
      { NODE_ENV: 'production', AUTH_SECRET: undefined },
      /AUTH_SECRET is required when NODE_ENV=production/,
    )
  })

  it.concurrent('a DATABASE_URL where no database answers', async () => {
    const nothing = await freePort('127.0.0.1')
    await expectOneLineFailure(
      { DATABASE_URL: `postgresql://parley@127.0.0.1:${nothing}/parley`, PORT: '0' },
      new RegExp(
        `cannot reach the database at 127\\.0\\.0\\.1:${nothing}/parley \\(ECONNREFUSED\\): start that PostgreSQL or fix DATABASE_URL`,
      ),
    )
  })

  it.concurrent('a PORT that another program listens on', async () => {
    const other: Server = createServer()
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve))
    const { port } = other.address() as { port: number }
    try {
      await expectOneLineFailure(
        { PORT: String(port) },
        new RegExp(`port ${port} on 0\\.0\\.0\\.0 is already in use: .*set PORT to a free port`),
      )
      expect(other.listening).toBe(true)
    } finally {
      await new Promise((resolve) => other.close(resolve))
    }
  })
})
