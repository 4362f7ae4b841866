import { existsSync } from 'node:fs'
import path from 'node:path'

/**
 * The folder holding package.json, prisma/ and schema.graphql: two levels above a source module,
 * three above its compiled copy in dist/ (npm run build), so it is looked up rather than assumed.
 */
function findProjectRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'package.json'))) return dir
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${from}`)
  }
}

export const PROJECT_ROOT = findProjectRoot(import.meta.dirname)
