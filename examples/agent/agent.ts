// An example agent for Parley (README.md beside this file): it hears its conversations through a
// webhook, answers a mention with a reply streamed a few words at a time, and for "approve" posts an
// approval card whose buttons it handles. Run: PARLEY_URL=… PARLEY_TOKEN=… npx tsx examples/agent/agent.ts
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { Webhook } from 'standardwebhooks'
import * as q from './parley.ts'

const env = (name: string, fallback?: string): string => {
  const value = process.env[name] ?? fallback
  if (value === undefined) throw new Error(`set ${name} (see examples/agent/README.md)`)
  return value
}
const parley = q.connect(env('PARLEY_URL'), env('PARLEY_TOKEN'))
/** The pause between two deltas: a model producing its tokens. */
const DELTA_MS = Number(env('AGENT_DELTA_MS', '40'))

/** A webhook body's message, as Parley's webhooks render it (docs/webhooks.md). */
type HookMessage = { id: string; kind: string; text?: string; mentionsRecipient: boolean; sender: { handle: string } }
type Hook =
  | { type: 'message.added'; data: { conversationId: string; message: HookMessage } }
  | { type: 'card.action'; data: { messageId: string; actionId: string; user: { handle: string } } }

/** A mention is answered with a card when it asks for an approval, else with a streamed reply. */
async function onMessage(conversationId: string, message: HookMessage): Promise<void> {
  if (message.kind !== 'TEXT' || !message.text || !message.mentionsRecipient) return
  if (/\bapprov/i.test(message.text)) await postApprovalCard(conversationId, message)
  else await streamReply(conversationId, message)
}

async function streamReply(conversationId: string, message: HookMessage): Promise<void> {
  await parley(q.SEND_TYPING, { conversationId, status: 'thinking…' })
  // The clientMessageId makes the start idempotent: a delivery Parley sends again starts nothing new.
  const { startStreamingMessage: started } = await parley<{
    startStreamingMessage: { deduplicated: boolean; message: { id: string } }
  }>(q.START_STREAM, { conversationId, clientMessageId: `reply-${message.id}`, quotedMessageId: message.id })
  if (started.deduplicated) return
  const reply = `Hello @${message.sender.handle}, you said "${message.text!.slice(0, 80)}". I am an example agent, and this reply reaches you a few words at a time.`
  const messageId = started.message.id
  // Deltas carry a sequence (1, 2, …): a retried append of the same sequence is a no-op.
  for (const [i, delta] of (reply.match(/\S+\s*/g) ?? []).entries()) {
    await parley(q.APPEND, { messageId, sequence: i + 1, delta })
    await sleep(DELTA_MS)
  }
  await parley(q.FINISH, { messageId })
}

async function postApprovalCard(conversationId: string, message: HookMessage): Promise<void> {
  const card = {
    cardType: 'approval',
    data: { status: 'pending', request: message.text, requestedBy: message.sender.handle },
    actions: [
      { id: 'approve', label: 'Approve', style: 'PRIMARY' },
      { id: 'reject', label: 'Reject', style: 'DANGER' },
    ],
  }
  const input = {
    conversationId,
    clientMessageId: `card-${message.id}`,
    quotedMessageId: message.id,
    content: { card },
  }
  await parley(q.SEND_CARD, { input })
}

/** A button pressed on one of the agent's cards: the first decision sticks, and the buttons go. */
async function onCardAction(messageId: string, actionId: string, user: { handle: string }): Promise<void> {
  const status = { approve: 'approved', reject: 'rejected' }[actionId]
  const { node } = await parley<{ node: { content: { data?: { status?: string } } } | null }>(q.READ_CARD, {
    id: messageId,
  })
  const data = node?.content.data
  if (!status || data?.status !== 'pending') return
  await parley(q.UPDATE_CARD, { messageId, data: { ...data, status, decidedBy: user.handle } })
}

function handle(hook: Hook): Promise<void> {
  if (hook.type === 'message.added') return onMessage(hook.data.conversationId, hook.data.message)
  if (hook.type === 'card.action') return onCardAction(hook.data.messageId, hook.data.actionId, hook.data.user)
  return Promise.resolve()
}

const readBody = async (req: IncomingMessage) => {
  let body = ''
  for await (const chunk of req) body += String(chunk)
  return body
}

const { viewer } = await parley<{ viewer: { user: { handle: string; kind: string } } }>(q.VIEWER)
if (viewer.user.kind !== 'AGENT')
  console.error(`note: ${viewer.user.handle} is a ${viewer.user.kind} user; an operator's upsertUsers makes it AGENT`)

// The port comes first: the webhook's URL names it. Requests are taken once the secret is known.
const server = createServer()
await new Promise<void>((resolve) =>
  server.listen(Number(env('AGENT_PORT', '4100')), env('AGENT_HOST', '127.0.0.1'), resolve),
)
const url = env('AGENT_PUBLIC_URL', `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhook`)
const { createWebhook } = await parley<{ createWebhook: { secret: string; webhook: { id: string } } }>(
  q.CREATE_WEBHOOK,
  { url },
)
const verifier = new Webhook(createWebhook.secret)
/** webhook-id headers already handled: Parley delivers at least once, so the same one may come again. */
const seen = new Set<string>()
server.on('request', (req: IncomingMessage, res: ServerResponse) => {
  void readBody(req).then((body) => {
    let hook: Hook
    try {
      // Checks the signature and that the timestamp is recent (a replayed request is refused).
      hook = verifier.verify(body, req.headers as Record<string, string>) as Hook
    } catch {
      return res.writeHead(401).end()
    }
    // Answered at once: Parley sends this conversation's next event only after a 2xx.
    res.writeHead(204).end()
    const id = req.headers['webhook-id'] as string
    if (seen.has(id)) return
    seen.add(id)
    handle(hook).catch((error: unknown) => console.error(`${hook.type} ${id} failed:`, error))
  })
})
console.log(`agent ${viewer.user.handle} hears ${url} (webhook ${createWebhook.webhook.id})`)

// Stopping removes the webhook: the next start registers a new one with a new secret.
const stop = async () => {
  await parley(q.DELETE_WEBHOOK, { id: createWebhook.webhook.id }).catch((error: unknown) => console.error(error))
  server.close()
  server.closeAllConnections()
}
process.once('SIGINT', () => void stop())
process.once('SIGTERM', () => void stop())
