import { rmSync } from 'node:fs'
import path from 'node:path'
import { afterAll, expect, it } from 'vitest'
import { embeddedParent, openDatabase, startEmbeddedPostgres } from '../../src/db/embedded.ts'
import { withPgClient } from '../../src/db/pg.ts'
import { freePort } from '../../src/lib/ports.ts'

const folders: string[] = []
const stops: (() => Promise<void>)[] = []
afterAll(async () => {
  for (const stop of stops.reverse()) await stop()
  for (const folder of folders) rmSync(folder, { recursive: true, force: true })
})

const dataDirectory = (url: string) =>
  withPgClient(
    url,
    async (c) => (await c.query<{ data_directory: string }>('SHOW data_directory')).rows[0]!.data_directory,
  )

it("starts on a free port when EMBEDDED_PG_PORT is another data folder's PostgreSQL, and leaves that one running", async () => {
  const port = await freePort('127.0.0.1')
  const otherDir = path.join(embeddedParent('parley-other-'), 'pg')
  folders.push(path.dirname(otherDir))
  const other = await startEmbeddedPostgres({ dir: otherDir, port, database: 'postgres' })
  stops.push(other.stop)

  const ownDataDir = embeddedParent('parley-own-')
  folders.push(ownDataDir)
  const logged: string[] = []
  const own = await openDatabase({ DATA_DIR: ownDataDir, EMBEDDED_PG_PORT: port }, (m) => logged.push(m))
  stops.push(own.stop)

  const ownPort = Number(new URL(own.url).port)
  expect(ownPort).not.toBe(port)
  expect(logged).toEqual([
    expect.stringMatching(new RegExp(`^port ${port} is in use by another program, .* uses port ${ownPort} instead`)),
  ])
  expect(await dataDirectory(own.url)).toBe(path.resolve(ownDataDir, 'pg'))
  // The other folder's server was neither stopped nor taken over.
  expect(await dataDirectory(other.url)).toBe(otherDir)
  expect(new URL(other.url).port).toBe(String(port))

  // Its own postmaster left behind (the parent died without stopping it) is recovered on the same folder, not dodged.
  const again = await startEmbeddedPostgres({
    dir: path.join(ownDataDir, 'pg'),
    port: ownPort,
    log: (m) => logged.push(m),
  })
  stops.splice(stops.indexOf(own.stop), 1, again.stop)
  expect(again.port).toBe(ownPort)
  expect(await dataDirectory(again.url)).toBe(path.resolve(ownDataDir, 'pg'))
  expect(logged).toHaveLength(1)
})
