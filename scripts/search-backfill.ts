// npm run search:backfill: search documents for messages and users written before search existed
// (idempotent; safe while the server runs). Uses DATABASE_URL, else the embedded database.
import { loadConfig } from '../src/config/env.ts'
import { createDb } from '../src/db/client.ts'
import { openDatabase } from '../src/db/embedded.ts'
import { backfillSearchDocuments } from '../src/domain/search/documents.ts'

const config = loadConfig()
const database = await openDatabase(config)
try {
  const db = createDb(database.url)
  const done = await backfillSearchDocuments(db)
  await db.$disconnect()
  console.log(`indexed ${done.messages} messages and ${done.users} users`)
} finally {
  await database.stop()
}
