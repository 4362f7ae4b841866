// Account sync: snapshot tokens and the difference since one.
export { currentSyncToken, sync } from './sync.ts'
export type { SyncBatch } from './sync.ts'
