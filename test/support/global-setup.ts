import { rmSync } from 'node:fs'
import path from 'node:path'
import pg from 'pg'
import type { TestProject } from 'vitest/node'
import { embeddedParent, startEmbeddedPostgres } from '../../src/db/embedded.ts'
import { migrateDeploy } from '../../src/db/migrate.ts'

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string
    /** A server URL on which the tests may create and drop throw-away databases (migration tests). */
    adminDatabaseUrl: string
  }
}

/**
 * One migrated database for the whole run. TEST_DATABASE_URL set: a throw-away database on that
 * server. Otherwise: a throw-away embedded PostgreSQL cluster (no server needed).
 */
export default async function setup(project: TestProject) {
  let adminUrl: string
  let teardown: () => Promise<void>
  if (process.env.TEST_DATABASE_URL) {
    adminUrl = process.env.TEST_DATABASE_URL
    teardown = async () => {}
  } else {
    const dir = path.join(embeddedParent('parley-test-'), 'pg')
    const port = 56000 + Math.floor(Math.random() * 4000)
    const db = await startEmbeddedPostgres({ dir, port, database: 'postgres', persistent: false })
    adminUrl = db.url
    teardown = async () => {
      await db.stop()
      rmSync(path.dirname(dir), { recursive: true, force: true })
    }
  }
  const name = `parley_test_${process.pid}_${Date.now()}`
  const admin = new pg.Client({ connectionString: adminUrl })
  await admin.connect()
  await admin.query(`CREATE DATABASE "${name}"`)
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  migrateDeploy(url.toString())
  project.provide('databaseUrl', url.toString())
  project.provide('adminDatabaseUrl', adminUrl)
  return async () => {
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)
    await admin.end()
    await teardown()
  }
}
