// Writes schema.graphql from the Pothos schema (lexicographically sorted). test/http/schema.test.ts fails when it is stale.
import { writeFileSync } from 'node:fs'
import { printSchemaSnapshot, SCHEMA_SNAPSHOT_PATH } from '../src/schema/snapshot.ts'

writeFileSync(SCHEMA_SNAPSHOT_PATH, printSchemaSnapshot())
console.log(`wrote ${SCHEMA_SNAPSHOT_PATH}`)
