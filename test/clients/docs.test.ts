import { readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'

const root = path.resolve(import.meta.dirname, '../..')
const doc = readFileSync(path.join(root, 'docs/clients.md'), 'utf8')

describe('docs/clients.md', () => {
  it.each(['apollo.ts', 'urql.ts', 'relay-environment.ts'])('shows test/clients/%s verbatim', (file) => {
    const code = readFileSync(path.join(root, 'test/clients', file), 'utf8').trimEnd()
    expect(doc).toContain('```ts\n' + code + '\n```')
  })
})
