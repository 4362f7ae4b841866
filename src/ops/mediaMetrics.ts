import { Counter, Gauge, type Registry } from 'prom-client'
import type { Parley } from '../app.ts'
import { storageTotals } from '../store/attachments.ts'

/**
 * The files metrics: uploads refused by reason (counted as they happen), and the storage the
 * attachments take, read from the database at each scrape so every instance reports the same
 * whole. Per-user storage is given as the number of uploaders and the largest user's bytes: a
 * label per user would grow the series without end.
 */
export function createMediaMetrics(registers: Registry[]) {
  const apps = new Set<Parley>()
  const totals = async () => {
    const all = { bytes: 0, uploaders: 0, largestUser: 0 }
    for (const app of apps) {
      const t = await storageTotals(app.db)
      all.bytes += t.bytes
      all.uploaders += t.uploaders
      all.largestUser = Math.max(all.largestUser, t.largestUser)
    }
    return all
  }
  const gauge = (name: string, help: string, pick: (t: Awaited<ReturnType<typeof totals>>) => number) =>
    new Gauge({
      name,
      help,
      registers,
      async collect() {
        this.set(pick(await totals()))
      },
    })
  gauge('parley_media_bytes_stored', 'Bytes of completed attachments', (t) => t.bytes)
  gauge('parley_media_uploaders', 'Users with at least one completed attachment', (t) => t.uploaders)
  gauge(
    'parley_media_user_bytes_max',
    'Bytes of completed attachments of the user who stores the most',
    (t) => t.largestUser,
  )
  const refused = new Counter({
    name: 'parley_uploads_refused_total',
    help: 'Uploads refused: size (bytes missing or of another size), kind (bytes unlike the declared kind), too-large (a PUT past the declared size)',
    labelNames: ['reason'],
    registers,
  })
  return {
    bind(app: Parley): void {
      apps.add(app)
      app.filesObserver = { refused: (reason) => refused.inc({ reason }) }
    },
  }
}
