import path from 'node:path'
import { defineConfig } from 'prisma/config'

// This machine cannot download Prisma's native schema engine: route the CLI's schema-engine calls
// to the wasm engine through scripts/schema-engine-shim.mjs (see docs/decisions/0002-prisma-offline-schema-engine.md).
process.env.PRISMA_SCHEMA_ENGINE_BINARY ??= path.resolve(import.meta.dirname, 'scripts/schema-engine-shim.mjs')
process.env.CHECKPOINT_DISABLE ??= '1'

export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  // `prisma generate` needs no database; migrate commands get DATABASE_URL from src/db/migrate.ts.
  datasource: { url: process.env.DATABASE_URL ?? 'postgresql://invalid/unset' },
})
