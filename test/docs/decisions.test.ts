import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'

const folder = path.resolve(import.meta.dirname, '../../docs/decisions')
const index = readFileSync(path.join(folder, 'README.md'), 'utf8')
const records = (dir: string) => readdirSync(path.join(folder, dir)).filter((f) => /^\d{4}-.*\.md$/.test(f))

describe('docs/decisions/README.md', () => {
  it('indexes every record with a link to its file and a status', () => {
    const files = [...records('.'), ...records('tuning').map((f) => `tuning/${f}`)]
    expect(files.length).toBeGreaterThan(50)
    const unindexed = files.filter((file) => {
      const row = index.split('\n').find((line) => line.includes(`](${file})`))
      return !row || !/\| (accepted|superseded by \d{4}|tuning note)/.test(row)
    })
    expect(unindexed).toEqual([])
  })
})
