import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import { graphql } from '../gql/index.ts'
import type { Parley } from '../../src/app.ts'
import { startWebhookWorker, type WebhookWorker } from '../../src/domain/webhooks/index.ts'
import { DEFAULT_SETTINGS } from '../../src/domain/core/settings.ts'

/** Webhook operations of the tests. */

export const CreateWebhook = graphql(`
  mutation CreateWebhook($input: CreateWebhookInput!) {
    createWebhook(input: $input) {
      secret
      webhook {
        id
        url
        events
        scope
        conversationIds
        active
        disabledReason
        createdAt
      }
    }
  }
`)

export const UpdateWebhook = graphql(`
  mutation UpdateWebhook($id: ID!, $input: UpdateWebhookInput!) {
    updateWebhook(id: $id, input: $input) {
      id
      url
      events
      active
      disabledReason
    }
  }
`)

export const RotateWebhookSecret = graphql(`
  mutation RotateWebhookSecret($id: ID!) {
    rotateWebhookSecret(id: $id) {
      secret
      webhook {
        id
      }
    }
  }
`)

export const DeleteWebhook = graphql(`
  mutation DeleteWebhook($id: ID!) {
    deleteWebhook(id: $id)
  }
`)

export const ViewerWebhooks = graphql(`
  query ViewerWebhooks($status: WebhookDeliveryStatus) {
    viewer {
      webhooks {
        id
        url
        active
        disabledReason
        deliveries(first: 100, status: $status) {
          edges {
            node {
              id
              eventType
              pts
              status
              attempts
              lastStatusCode
              lastError
              nextAttemptAt
              deliveredAt
              conversation {
                id
              }
            }
          }
        }
      }
    }
  }
`)

/**
 * The retry schedule of every worker the webhook tests run (in process and spawned): the workers
 * share one database, so any of them may deliver any test's webhook.
 */
export const TEST_RETRY_SCHEDULE_MS = [30, 30, 30, 30, 30, 30]

/** The environment a spawned Parley needs to deliver the tests' webhooks (same key, schedule, loopback). */
export const WEBHOOK_TEST_ENV = {
  WEBHOOK_SECRET_KEY: DEFAULT_SETTINGS.webhooks.secretKey,
  WEBHOOK_RETRY_SCHEDULE_MS: TEST_RETRY_SCHEDULE_MS.join(','),
  WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8',
}

/** A worker on `app` with the tests' schedule. */
export function startTestWorker(app: Parley): WebhookWorker {
  app.settings.webhooks.retryScheduleMs = TEST_RETRY_SCHEDULE_MS
  return startWebhookWorker(app, { pollMs: 20 })
}

export type ReceivedRequest = { n: number; headers: IncomingHttpHeaders; body: string; answered: number }
type Body = {
  type: string
  timestamp: string
  data: {
    conversationId: string
    pts: number
    message: {
      id: string
      seq: number
      text?: string
      status: string
      mentionsRecipient: boolean
      sender: { id: string; handle: string } | null
    }
  }
}

/**
 * A receiver on loopback: `answer(n)` chooses the status of the n-th request (1-based; default 204),
 * sent with `headers`. `requests` holds every request; `delivered` the bodies of those answered 2xx,
 * in arrival order.
 */
export async function startReceiver(answer: (n: number) => number = () => 204, headers: Record<string, string> = {}) {
  const requests: ReceivedRequest[] = []
  const server = createServer((req, res) => {
    let body = ''
    req.setEncoding('utf8')
    req.on('data', (chunk: string) => (body += chunk))
    req.on('end', () => {
      const n = requests.length + 1
      const answered = answer(n)
      requests.push({ n, headers: req.headers, body, answered })
      res.writeHead(answered, headers).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`
  const delivered = () =>
    requests.filter((r) => r.answered >= 200 && r.answered < 300).map((r) => JSON.parse(r.body) as Body)
  return {
    url,
    requests,
    delivered,
    /** Waits (polling) until `done` holds for the requests so far. */
    async until(done: (requests: ReceivedRequest[]) => boolean, what = 'the expected requests'): Promise<void> {
      for (const deadline = Date.now() + 30_000; !done(requests);) {
        if (Date.now() > deadline) throw new Error(`receiver: no ${what} after 30 s (got ${requests.length})`)
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
    },
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  }
}

/** Polls `read` until `done` holds for its value (30 s at most). */
export async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  for (const deadline = Date.now() + 30_000; ;) {
    const value = await read()
    if (done(value)) return value
    if (Date.now() > deadline) throw new Error(`condition not met after 30 s: ${JSON.stringify(value).slice(0, 500)}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}
