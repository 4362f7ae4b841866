import { spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { PROJECT_ROOT } from '../lib/projectRoot.ts'

/**
 * Runs a Prisma CLI command (offline, through the wasm schema-engine shim in prisma.config.ts).
 * Throws unless it exits with one of `okStatuses` (`migrate diff --exit-code` uses 2 for "differs").
 */
export function runPrisma(
  args: string[],
  databaseUrl: string,
  okStatuses: number[] = [0],
): { status: number; output: string } {
  const cli = createRequire(import.meta.url).resolve('prisma/build/index.js')
  const result = spawnSync(process.execPath, [cli, ...args], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, DATABASE_URL: databaseUrl },
    encoding: 'utf8',
  })
  const output = `${result.stdout}${result.stderr}`
  if (result.status === null || !okStatuses.includes(result.status))
    throw new Error(`prisma ${args.join(' ')} failed:\n${output}`)
  return { status: result.status, output }
}

export function migrateDeploy(databaseUrl: string): void {
  runPrisma(['migrate', 'deploy'], databaseUrl)
}
