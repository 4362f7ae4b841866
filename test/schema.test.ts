import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { buildSchema, findBreakingChanges } from 'graphql'
import { describe, expect, it } from 'vitest'
import { schema } from '../src/schema/index.ts'
import { printSchemaSnapshot, SCHEMA_SNAPSHOT_PATH } from '../src/schema/snapshot.ts'

const root = path.resolve(import.meta.dirname, '..')
/** The contract as vendored in this repo, and the design folder's copy when it sits beside the checkout. */
const VENDORED = path.join(root, 'contract/api.graphql')
const DESIGN = path.resolve(root, '../shared/design/api.graphql')

describe('schema.graphql', () => {
  it('is the current print of the Pothos schema (run `npm run schema`)', () => {
    expect(readFileSync(SCHEMA_SNAPSHOT_PATH, 'utf8')).toBe(printSchemaSnapshot())
  })

  it('has no breaking change against the contract', () => {
    const contract = buildSchema(readFileSync(VENDORED, 'utf8'))
    const breaking = findBreakingChanges(contract, schema).map((c) => `${c.type}: ${c.description}`)
    expect(breaking).toEqual([])
  })

  it('vendors the same contract as the design folder, when that folder is beside the checkout', () => {
    const copies = [VENDORED, DESIGN].filter(existsSync).map((file) => readFileSync(file, 'utf8'))
    expect(new Set(copies).size).toBe(1)
  })
})
