import { createAgents, postCapped, type Agents } from '../webhooks/post.ts'
import type { App } from '../core/app.ts'
import type { PushDeviceRecord } from '../../store/pushDevices.ts'
import type { GorushNotification } from './notifications.ts'

/** The gateway is hostile like a webhook receiver: one request costs at most this long. */
const GATEWAY_TIMEOUT_MS = 10_000
/** How Gorush (and APNs, FCM, HMS behind it) say a token will never work again. */
const INVALID_TOKEN = /invalid|unregistered|not ?registered|BadDeviceToken|DeviceTokenNotForTopic|expired/i

type GorushLog = { type?: unknown; token?: unknown; error?: unknown; message?: unknown }
const text = (v: unknown) => (typeof v === 'string' ? v : '')

export { createAgents, type Agents }

/**
 * POSTs one request of at most 100 notifications to the Gorush gateway and answers the devices its
 * answer's `logs` report as failed for an invalid or unregistered token. Anything but a 2xx (or no
 * answer in time) throws: the job is retried on the outbox's schedule. The gateway's address is
 * judged like a webhook's (webhooks/address.ts: private networks only inside WEBHOOK_ALLOWED_NETWORKS).
 */
export async function postNotifications(
  app: App,
  agents: Agents,
  request: { notifications: GorushNotification[]; devices: PushDeviceRecord[] },
): Promise<PushDeviceRecord[]> {
  const answer = await postCapped(
    app.settings.push.gatewayUrl!,
    { 'user-agent': 'Parley-Push' },
    JSON.stringify({ notifications: request.notifications }),
    { rules: app.settings.webhooks, agents, timeoutMs: GATEWAY_TIMEOUT_MS },
  )
  if (answer.status < 200 || answer.status >= 300) throw new Error(`push gateway answered HTTP ${answer.status}`)
  let logs: GorushLog[] = []
  try {
    const parsed = JSON.parse(answer.body) as { logs?: unknown }
    if (Array.isArray(parsed.logs)) logs = parsed.logs as GorushLog[]
  } catch {
    // An answer that is not JSON (or was cut at the cap) reports no failed tokens.
  }
  const invalid = new Set(
    logs
      .filter(
        (l) =>
          typeof l.token === 'string' &&
          text(l.type).includes('fail') &&
          INVALID_TOKEN.test(`${text(l.error)} ${text(l.message)}`),
      )
      .map((l) => l.token as string),
  )
  return request.devices.filter((d) => invalid.has(d.token))
}
