import { Webhook as Signer } from 'standardwebhooks'
import type { App } from '../core/app.ts'
import { encodeGlobalId } from '../core/ids.ts'
import type { AttemptResult, ClaimedDelivery, PostedDelivery } from '../../store/webhookDeliveries.ts'
import { renderBody } from './payload.ts'
import { postWebhook, type Agents } from './post.ts'
import { decryptSecret } from './secrets.ts'

/** Signers by key and stored secret: deriving the key and opening the secret cost more than signing. */
const signers = new Map<string, Signer>()
const SIGNERS_KEPT = 1000

function signerOf(keyMaterial: string, stored: string): Signer {
  const key = `${keyMaterial}\0${stored}`
  let signer = signers.get(key)
  if (!signer) {
    if (signers.size >= SIGNERS_KEPT) signers.clear()
    signer = new Signer(decryptSecret(keyMaterial, stored).slice('whsec_'.length))
    signers.set(key, signer)
  }
  return signer
}

/** Retry after the next delay of the schedule, ±10% so receivers that failed together are not hit together. */
function retryOrFail(app: App, d: ClaimedDelivery, statusCode: number | null, error: string): AttemptResult {
  const delay = app.settings.webhooks.retryScheduleMs[d.roundAttempts]
  if (delay !== undefined)
    return { outcome: 'retry', statusCode, error, retryInMs: Math.round(delay * (0.9 + Math.random() * 0.2)) }
  const id = encodeGlobalId('WebhookDelivery', d.id)
  return {
    outcome: 'failed',
    statusCode,
    error,
    disableReason: `delivery ${id} failed after ${d.roundAttempts + 1} attempts: ${error}`,
  }
}

/**
 * POSTs a delivery signed as Standard Webhooks asks and says what came of it: 2xx delivered, 410
 * failed (the webhook is disabled), anything else (or no answer) retried by the schedule, then failed.
 */
export async function attemptDelivery(app: App, agents: Agents, d: ClaimedDelivery): Promise<PostedDelivery> {
  const body = d.body ?? renderBody(d)
  try {
    const id = encodeGlobalId('WebhookDelivery', d.id)
    const now = new Date()
    const signer = signerOf(app.settings.webhooks.secretKey, d.secret)
    const headers = {
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
      'webhook-signature': signer.sign(id, now, body),
      'user-agent': 'Parley-Webhooks',
    }
    const status = await postWebhook(d.url, headers, body, { rules: app.settings.webhooks, agents })
    if (status >= 200 && status < 300) return { id: d.id, body, result: { outcome: 'delivered', statusCode: status } }
    if (status === 410)
      return {
        id: d.id,
        body,
        result: {
          outcome: 'failed',
          statusCode: status,
          error: 'HTTP 410',
          disableReason: 'the receiver answered 410 Gone',
        },
      }
    return { id: d.id, body, result: retryOrFail(app, d, status, `HTTP ${status}`) }
  } catch (error) {
    return { id: d.id, body, result: retryOrFail(app, d, null, error instanceof Error ? error.message : String(error)) }
  }
}
