// Push: the viewer's devices, and notifications of alerting messages through a Gorush gateway (docs/push.md).
export {
  registerPushDevice,
  requirePushDevice,
  tokenSuffix,
  unregisterPushDevice,
  viewerPushDevices,
} from './devices.ts'
export { recordPushJobs } from './outbox.ts'
export { startPushWorker } from './worker.ts'
export type { PushWorker } from './worker.ts'
