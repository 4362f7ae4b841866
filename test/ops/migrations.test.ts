import { readdirSync } from 'node:fs'
import path from 'node:path'
import pg from 'pg'
import { describe, expect, it } from 'vitest'
import { inject } from 'vitest'
import { runPrisma } from '../../src/db/migrate.ts'
import { withPgClient } from '../../src/db/pg.ts'

const migrationsDir = path.resolve(import.meta.dirname, '../../prisma/migrations')

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

      const { rows } = await withPgClient(url.toString(), (c) =>
        c.query('SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL ORDER BY migration_name'),
      )
      const onDisk = readdirSync(migrationsDir, { withFileTypes: true })
        .filter((d) => d.isDirectory())
        .map((d) => d.name)
        .sort()
      expect(rows.map((r) => r.migration_name)).toEqual(onDisk)

      // `migrate diff --exit-code` exits 0 for no difference and 2 for one. The database the migrations
      // built matches schema.prisma…
      const drift = () =>
        runPrisma(
          ['migrate', 'diff', '--from-config-datasource', '--to-schema', 'prisma/schema.prisma', '--exit-code'],
          url.toString(),
          [0, 2],
        ).status
      expect(drift()).toBe(0)
      // …and the comparison does read the database: without one of its indexes it differs.
      await withPgClient(url.toString(), (c) => c.query('DROP INDEX "messages_sent_at_idx"'))
      expect(drift()).toBe(2)
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)
      await admin.end()
    }
  })
})
