/**
 * A server killed between commit and delivery: run as its own process (crash.ts#sendThenCrash), it
 * sends one message with no webhook or push worker running (push on when PUSH_GATEWAY_URL is set)
 * and, at the moment the committed transaction publishes its events, kills itself with SIGKILL.
 * The outbox rows (webhook deliveries, a push job) are committed; nothing was sent.
 */
import { createDb } from '../../src/db/client.ts'
import { createApp } from '../../src/app.ts'
import { DEFAULT_SETTINGS } from '../../src/domain/core/settings.ts'
import { sendMessage } from '../../src/domain/send/index.ts'
import { createRealtime } from '../../src/realtime/pubsub.ts'

const bus = createRealtime()
const die = async () => {
  process.kill(process.pid, 'SIGKILL')
  return false
}
const gatewayUrl = process.env.PUSH_GATEWAY_URL
const app = createApp({
  db: createDb(process.env.DATABASE_URL!, { poolSize: 1 }),
  realtime: { ...bus, publish: die },
  settings: gatewayUrl ? { ...DEFAULT_SETTINGS, push: { gatewayUrl, preview: 'full' } } : DEFAULT_SETTINGS,
})
await sendMessage(
  app,
  { userId: Number(process.env.SENDER_ID), handle: process.env.SENDER_HANDLE!, kind: 'HUMAN', isOperator: false },
  {
    conversationId: process.env.CONVERSATION_ID!,
    clientMessageId: 'before the crash',
    content: { text: { text: 'sent just before the crash' } },
  },
)
// Reached only when the send published nothing.
process.exit(3)
