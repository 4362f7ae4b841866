import { readdirSync } from 'node:fs'
import path from 'node:path'
import pg from 'pg'
import { describe, expect, it } from 'vitest'
import { inject } from 'vitest'
import { runPrisma } from '../src/db/migrate.ts'

const migrationsDir = path.resolve(import.meta.dirname, '../prisma/migrations')

describe('migrations', () => {
  it('deploy on an empty database and show no drift against schema.prisma', async () => {
    const adminUrl = inject('adminDatabaseUrl')
    const name = `parley_migrate_${process.pid}_${Date.now()}`
    const admin = new pg.Client({ connectionString: adminUrl })
    await admin.connect()
    await admin.query(`CREATE DATABASE "${name}"`)
    try {
      const url = new URL(adminUrl)
      url.pathname = `/${name}`
      runPrisma(['migrate', 'deploy'], url.toString())

      const applied = new pg.Client({ connectionString: url.toString() })
      await applied.connect()
      const { rows } = await applied.query('SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL ORDER BY migration_name')
      await applied.end()
      const onDisk = readdirSync(migrationsDir, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).sort()
      expect(rows.map((r) => r.migration_name)).toEqual(onDisk)

      // The deployed database, and the migrations replayed on a shadow database, both match the schema.
      const deployedDiff = runPrisma(['migrate', 'diff', '--from-config-datasource', '--to-schema', 'prisma/schema.prisma', '--exit-code'], url.toString())
      expect(deployedDiff).toContain('No difference detected')
      const replayDiff = runPrisma(['migrate', 'diff', '--from-migrations', 'prisma/migrations', '--to-schema', 'prisma/schema.prisma', '--exit-code'], url.toString())
      expect(replayDiff).toContain('No difference detected')
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)
      await admin.end()
    }
  })
})
