import { createHash } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import {
  buildSchema,
  findBreakingChanges,
  type BreakingChange,
  type GraphQLNamedType,
  type GraphQLSchema,
  isInterfaceType,
  isObjectType,
  isUnionType,
} from 'graphql'
import { describe, expect, it } from 'vitest'
import { schema } from '../../src/schema/index.ts'
import { printSchemaSnapshot, SCHEMA_SNAPSHOT_PATH } from '../../src/schema/snapshot.ts'

const root = path.resolve(import.meta.dirname, '../..')
/** The contract as vendored in this repo, and the design folder's copy when it sits beside the checkout. */
const VENDORED = path.join(root, 'contract/api.graphql')
const DESIGN = path.resolve(root, '../shared/design/api.graphql')
const PENDING = path.join(root, 'contract/pending.txt')
/** `sha256sum api.graphql` of the design's contract when it was vendored. */
const VENDORED_DIGEST = path.join(root, 'contract/api.graphql.sha256')

const sha256 = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex')

/**
 * The schema coordinate a breaking change is about: `Type`, `Type.field`, `Type.field(arg:)`,
 * `Enum.VALUE`, or `Union.Member` for a union member.
 */
function coordinateOf(change: BreakingChange): string {
  const d = change.description
  const patterns: [RegExp, (m: RegExpMatchArray) => string][] = [
    [/^(\w+) was removed from (?:enum|union) type (\w+)\./, (m) => `${m[2]}.${m[1]}`],
    [/^A required arg (\w+) on (\w+)\.(\w+) was added/, (m) => `${m[2]}.${m[3]}(${m[1]}:)`],
    [/^A required field (\w+) on input type (\w+) was added/, (m) => `${m[2]}.${m[1]}`],
    [/^(\w+)\.(\w+) arg (\w+) /, (m) => `${m[1]}.${m[2]}(${m[3]}:)`],
    [/^(\w+)\.(\w+) /, (m) => `${m[1]}.${m[2]}`],
    [/^(\w+) /, (m) => m[1]!],
  ]
  for (const [pattern, coordinate] of patterns) {
    const match = d.match(pattern)
    if (match) return coordinate(match)
  }
  throw new Error(`no coordinate for breaking change: ${d}`)
}

/** `contract/pending.txt`: one coordinate a line, each with the issue that will serve it. */
function pendingCoordinates(): Map<string, string> {
  const lines = existsSync(PENDING) ? readFileSync(PENDING, 'utf8').split('\n') : []
  const pending = new Map<string, string>()
  for (const line of lines) {
    const [coordinate, note = ''] = line.split('#', 2).map((part) => part.trim()) as [string, string?]
    if (!coordinate) continue
    if (!/issue \d+/.test(note))
      throw new Error(`contract/pending.txt: "${coordinate}" names no issue ("# issue N: …")`)
    pending.set(coordinate, note)
  }
  return pending
}

/**
 * The contract's client rule: a field name shared by members of a union (or implementations of an
 * interface) has one type in all of them, so one selection with a fragment per member is valid.
 */
function conflictingSharedFields(served: GraphQLSchema): string[] {
  const conflicts: string[] = []
  for (const type of Object.values(served.getTypeMap())) {
    let members: readonly GraphQLNamedType[] = []
    if (isUnionType(type)) members = type.getTypes()
    else if (isInterfaceType(type)) members = served.getPossibleTypes(type)
    // Every pair of members that disagree, so the result does not depend on the order members are listed in.
    const typesOfField = new Map<string, { member: string; type: string }[]>()
    for (const member of members) {
      if (!isObjectType(member)) continue
      for (const field of Object.values(member.getFields())) {
        const seen = typesOfField.get(field.name) ?? []
        for (const earlier of seen.filter((s) => s.type !== String(field.type))) {
          const pair = [
            `${earlier.member}.${field.name} is ${earlier.type}`,
            `${member.name}.${field.name} is ${String(field.type)}`,
          ].sort()
          conflicts.push(`${type.name}: ${pair.join(', ')}`)
        }
        typesOfField.set(field.name, [...seen, { member: member.name, type: String(field.type) }])
      }
    }
  }
  return conflicts
}

describe('schema.graphql', () => {
  it('is the current print of the Pothos schema (run `npm run schema`)', () => {
    expect(readFileSync(SCHEMA_SNAPSHOT_PATH, 'utf8')).toBe(printSchemaSnapshot())
  })

  it('breaks nothing in the contract except the coordinates contract/pending.txt lists, and serves none of those yet', () => {
    const contract = buildSchema(readFileSync(VENDORED, 'utf8'))
    const pending = pendingCoordinates()
    const breaking = findBreakingChanges(contract, schema).map((c) => ({
      coordinate: coordinateOf(c),
      description: c.description,
    }))
    const unlisted = breaking.filter((c) => !pending.has(c.coordinate)).map((c) => c.description)
    expect(unlisted, 'breaking changes against the contract that pending.txt does not list').toEqual([])
    const stillBroken = new Set(breaking.map((c) => c.coordinate))
    const served = [...pending.keys()].filter((coordinate) => !stillBroken.has(coordinate))
    expect(served, 'served now: remove these lines from contract/pending.txt').toEqual([])
  })

  it('gives every field shared by members of a union or interface one type (the contract’s client rule)', () => {
    // The contract breaks its own rule in two places (docs/decisions/0013-contract-v2-vendoring.md); those stay until it changes.
    const contractConflicts = new Set(conflictingSharedFields(buildSchema(readFileSync(VENDORED, 'utf8'))))
    expect(conflictingSharedFields(schema).filter((conflict) => !contractConflicts.has(conflict))).toEqual([])
  })

  it('vendors the design contract unedited: the copy has the digest recorded when it was vendored, and so has the design folder’s when it is beside the checkout', () => {
    const recorded = readFileSync(VENDORED_DIGEST, 'utf8').split(/\s+/)[0]
    expect(sha256(VENDORED), 'contract/api.graphql differs from the vendored design contract').toBe(recorded)
    if (existsSync(DESIGN))
      expect(sha256(DESIGN), 'the design contract changed: vendor it again and record its digest (sha256sum)').toBe(
        recorded,
      )
  })
})
