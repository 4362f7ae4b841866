// Push: the viewer's devices, and notifications of alerting messages through a Gorush gateway.
export {
  registerPushDevice,
  requirePushDevice,
  tokenSuffix,
  unregisterPushDevice,
  viewerPushDevices,
} from './devices.ts'
