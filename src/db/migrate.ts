import { spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'
import path from 'node:path'

const projectRoot = path.resolve(import.meta.dirname, '../..')

/** Runs a Prisma CLI command (offline, through the wasm schema-engine shim in prisma.config.ts). */
export function runPrisma(args: string[], databaseUrl: string): string {
  const cli = createRequire(import.meta.url).resolve('prisma/build/index.js')
  const result = spawnSync(process.execPath, [cli, ...args], {
    cwd: projectRoot,
    env: { ...process.env, DATABASE_URL: databaseUrl },
    encoding: 'utf8',
  })
  if (result.status !== 0) throw new Error(`prisma ${args.join(' ')} failed:\n${result.stdout}\n${result.stderr}`)
  return result.stdout
}

export function migrateDeploy(databaseUrl: string): void {
  runPrisma(['migrate', 'deploy'], databaseUrl)
}
