import type { Db, Tx } from '../../db/client.ts'
import type { ReplicaRouter } from '../../db/replicas.ts'
import type { RealtimeEvent } from '../../realtime/events.ts'
import type { Realtime } from '../../realtime/pubsub.ts'
import type { UserKind } from '../../store/records.ts'
import type { Settings } from './settings.ts'

/**
 * What a verified token says (src/http/auth/): the user's handle, operator or not, and for a user's
 * first appearance its display name and kind (a later token changes neither: upsertUsers does).
 */
export type Identity = { handle: string; isOperator: boolean; name: string | null; kind: UserKind }

/** The authenticated caller. */
export type Viewer = { userId: number; handle: string; kind: UserKind; isOperator: boolean }

/**
 * Writes that commit with every change's events, inside its transaction (transact): the webhook
 * outbox, which src/app.ts wires in, so core imports no feature. It may answer what to run once the
 * transaction committed (wake this process's outbox workers).
 */
type EventRecorder = (tx: Tx, events: readonly RealtimeEvent[]) => Promise<(() => void) | undefined>

/**
 * What every domain action runs against: the database, the realtime bus, the behaviour settings and
 * the event recorder. A feature that keeps per-instance state asks for it next to these
 * (live/hub.ts's LiveApp, send/queue.ts's SendApp, live/typing.ts's TypingApp); src/app.ts builds the whole.
 */
export type App = {
  db: Db
  realtime: Realtime
  settings: Settings
  recordEvents: EventRecorder
  /** Read replicas (DATABASE_REPLICA_URLS); absent: every read goes to `db`. */
  replicas?: ReplicaRouter
}

/**
 * Where a read for `viewer` outside a transaction goes: a replica that holds the viewer's own last
 * write and is not lagging, else the primary (decision 0288). Only the reads named there use it:
 * history pages, search, sync, the inbox and operators' reads.
 */
export const readerOf = (app: App, viewer: Viewer): Db => app.replicas?.readerFor(viewer.userId) ?? app.db
