// Webhooks: their owners' actions, the deliveries they may read, and the worker that sends the outbox.
export { recordWebhookDeliveries } from './outbox.ts'
/** @public The entry point of events that are not messages (decision 0276). */
export { recordWebhookEvents } from './outbox.ts'
/** @public */
export type { WebhookEvent } from './outbox.ts'
export { listWebhookDeliveries } from './deliveries.ts'
export {
  createWebhook,
  deleteWebhook,
  requireWebhook,
  rotateWebhookSecret,
  updateWebhook,
  viewerWebhooks,
} from './webhooks.ts'
export type { WebhookWithSecret } from './webhooks.ts'
export { startWebhookWorker } from './worker.ts'
export type { WebhookWorker } from './worker.ts'
