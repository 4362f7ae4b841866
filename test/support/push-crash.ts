/**
 * A server killed between commit and push: run as its own process (test/push/push.test.ts), it
 * sends one message with push on and no push worker running and, at the moment the committed
 * transaction publishes its events, kills itself with SIGKILL. The push job is committed; nothing was sent.
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
const app = createApp({
  db: createDb(process.env.DATABASE_URL!, { poolSize: 1 }),
  realtime: { ...bus, publish: die },
  settings: { ...DEFAULT_SETTINGS, push: { gatewayUrl: process.env.PUSH_GATEWAY_URL!, preview: 'full' } },
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
