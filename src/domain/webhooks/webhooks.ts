import type { Tx } from '../../db/client.ts'
import { badInput, limitReached, notFound } from '../core/errors.ts'
import { parseId } from '../core/ids.ts'
import { LIMITS } from '../core/limits.ts'
import type { App, Viewer } from '../core/app.ts'
import { transact } from '../core/transact.ts'
import { requireOperator } from '../policy/policy.ts'
import { lockUser } from '../../store/users.ts'
import {
  countWebhooks,
  deleteWebhook as deleteStoredWebhook,
  findWebhook,
  insertWebhook,
  listWebhooks,
  updateWebhook as updateStoredWebhook,
  type WebhookEventType,
  type WebhookRecord,
  type WebhookScope,
} from '../../store/webhooks.ts'
import { checkHost } from './address.ts'
import { encryptSecret, newSecret } from './secrets.ts'

/** A webhook with its secret in the clear: the one answer that shows it. */
export type WebhookWithSecret = { webhook: WebhookRecord; secret: string }

/** http(s) only, at most LIMITS.urlLength, and a host whose every address may be reached (address.ts). */
async function checkUrl(app: App, url: string): Promise<string> {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw badInput('url must be an absolute http or https URL', 'url')
  }
  if (!['http:', 'https:'].includes(parsed.protocol) || url.length > LIMITS.urlLength || parsed.username)
    throw badInput(
      `url must be an http or https URL without credentials, at most ${LIMITS.urlLength} characters`,
      'url',
    )
  const refused = await checkHost(parsed.hostname, app.settings.webhooks)
  if (refused) throw badInput(`url is not reachable for webhooks: ${refused}`, 'url')
  return parsed.href
}

function checkEvents(events: readonly WebhookEventType[]): WebhookEventType[] {
  if (!events.length) throw badInput('events must name at least one event type', 'events')
  return [...new Set(events)]
}

const seal = (app: App, secret: string) => encryptSecret(app.settings.webhooks.secretKey, secret)

/**
 * A webhook of the viewer's: VIEWER scope hears what the viewer may see, ALL scope (operators only)
 * every conversation; `conversationIds` narrows either. At most LIMITS.webhooksPerUser a user.
 */
export async function createWebhook(
  app: App,
  viewer: Viewer,
  input: { url: string; events: WebhookEventType[]; scope?: WebhookScope | null; conversationIds?: string[] | null },
): Promise<WebhookWithSecret> {
  const scope = input.scope ?? 'VIEWER'
  if (scope === 'ALL') requireOperator(viewer, 'create webhooks of scope ALL')
  const events = checkEvents(input.events)
  const conversationIds = input.conversationIds
    ? [...new Set(input.conversationIds.map((id) => parseId(id, 'Conversation')))]
    : null
  if (conversationIds && conversationIds.length > LIMITS.webhookConversations)
    throw badInput(`conversationIds holds at most ${LIMITS.webhookConversations} ids`, 'conversationIds')
  const url = await checkUrl(app, input.url)
  const secret = newSecret()
  return transact(app, async (tx) => {
    await lockUser(tx, viewer.userId)
    if ((await countWebhooks(tx, viewer.userId)) >= LIMITS.webhooksPerUser)
      throw limitReached(`you can have at most ${LIMITS.webhooksPerUser} webhooks`, LIMITS.webhooksPerUser)
    const webhook = await insertWebhook(tx, {
      ownerId: viewer.userId,
      url,
      events,
      scope,
      conversationIds,
      secret: seal(app, secret),
    })
    return { result: { webhook, secret }, events: [] }
  })
}

/** The viewer's webhook `id` (another's, or none: NOT_FOUND), changed inside one transaction. */
async function changeOwn<T>(
  app: App,
  viewer: Viewer,
  id: string,
  change: (webhook: WebhookRecord, tx: Tx) => Promise<T>,
): Promise<T> {
  const webhookId = parseId(id, 'Webhook')
  return transact(app, async (tx) => {
    const webhook = await findWebhook(tx, viewer.userId, webhookId, true)
    if (!webhook) throw notFound('Webhook')
    return { result: await change(webhook, tx), events: [] }
  })
}

/** url, events, or active: turning it on sends a FAILED delivery again first, then the pending ones. */
export async function updateWebhook(
  app: App,
  viewer: Viewer,
  id: string,
  input: { url?: string | null; events?: WebhookEventType[] | null; active?: boolean | null },
): Promise<WebhookRecord> {
  const url = input.url == null ? undefined : await checkUrl(app, input.url)
  const events = input.events == null ? undefined : checkEvents(input.events)
  return changeOwn(app, viewer, id, (webhook, tx) =>
    updateStoredWebhook(tx, webhook.id, { url, events, active: input.active ?? undefined }),
  )
}

/** A new secret, shown once; the old one signs nothing from now on. */
export function rotateWebhookSecret(app: App, viewer: Viewer, id: string): Promise<WebhookWithSecret> {
  const secret = newSecret()
  return changeOwn(app, viewer, id, async (webhook, tx) => ({
    webhook: await updateStoredWebhook(tx, webhook.id, { secret: seal(app, secret) }),
    secret,
  }))
}

/** Deletes the viewer's webhook with its deliveries; NOT_FOUND when the viewer has no such webhook. */
export async function deleteWebhook(app: App, viewer: Viewer, id: string): Promise<boolean> {
  if (!(await deleteStoredWebhook(app.db, viewer.userId, parseId(id, 'Webhook')))) throw notFound('Webhook')
  return true
}

export const viewerWebhooks = (app: App, viewer: Viewer) => listWebhooks(app.db, viewer.userId)

/** The viewer's webhook `id`, for node(id); another's, or none: NOT_FOUND. */
export async function requireWebhook(app: App, viewer: Viewer, id: number): Promise<WebhookRecord> {
  return (await findWebhook(app.db, viewer.userId, id)) ?? Promise.reject(notFound('Webhook'))
}
