import type { App } from '../core/app.ts'
import { keysetCursor } from '../core/cursors.ts'
import { pageSize } from '../core/input.ts'
import { forwardPage, type Connection } from '../core/paging.ts'
import type { DeliveryStatus } from '../../store/webhookDeliveries.ts'
import { listDeliveries, type DeliveryRecord } from '../../store/webhookDeliveryHistory.ts'
import type { WebhookRecord } from '../../store/webhooks.ts'

const DELIVERY_CURSOR = keysetCursor('webhookDelivery', ['id'])

/** Webhook.deliveries, newest first: the webhook was read as its owner's (Viewer.webhooks, a mutation's answer). */
export async function listWebhookDeliveries(
  app: App,
  webhook: WebhookRecord,
  args: { first?: number | null; after?: string | null; status?: DeliveryStatus | null },
): Promise<Connection<DeliveryRecord>> {
  const limit = pageSize(args.first, 'first')
  const after = DELIVERY_CURSOR.decode(args.after, 'after')
  const rows = await listDeliveries(app.db, webhook.id, {
    beforeId: after?.[0] ?? null,
    limit: limit + 1,
    status: args.status ?? null,
  })
  return forwardPage(rows, limit, (d) => DELIVERY_CURSOR.encode(d.id), after !== null)
}
