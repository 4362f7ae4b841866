import type { Parley } from '../app.ts'
import type { Viewer } from '../domain/core/index.ts'
import { createGroup, openPrivateConversation } from '../domain/members/index.ts'
import { sendMessage } from '../domain/send/index.ts'
import { upsertUsers } from '../domain/members/index.ts'
import { encodeGlobalId } from '../domain/core/index.ts'
import { listInbox } from '../store/inbox.ts'

const DEMO_USERS = [
  { handle: 'alice', displayName: 'Alice Chen', kind: 'HUMAN' as const },
  { handle: 'bob', displayName: 'Bob Li', kind: 'HUMAN' as const },
  { handle: 'carol', displayName: 'Carol Wang', kind: 'HUMAN' as const },
  { handle: 'helper-bot', displayName: 'Helper Bot', kind: 'AGENT' as const },
]

/**
 * Demo users and conversations so GraphiQL shows something real. Idempotent: users are upserted,
 * the private chat is per pair, and messages carry fixed clientMessageIds (a rerun deduplicates).
 * The group is created only when alice has none yet.
 */
export async function seedDemo(app: Parley): Promise<void> {
  const operator: Viewer = { userId: 0, handle: 'seed', kind: 'HUMAN', isOperator: true }
  const [alice, bob, carol, bot] = await upsertUsers(app, operator, DEMO_USERS)
  const as = (u: typeof alice): Viewer => ({ userId: u!.id, handle: u!.handle, kind: u!.kind, isOperator: false })
  const say = (from: typeof alice, conversationId: number, key: string, text: string) =>
    sendMessage(app, as(from), {
      conversationId: encodeGlobalId('Conversation', conversationId),
      clientMessageId: `demo-${key}`,
      content: { text: { text } },
    })

  const privateId = await openPrivateConversation(app, as(alice), encodeGlobalId('User', bob!.id))
  await say(alice, privateId, 'p1', 'Hi Bob, is the release checklist ready?')
  await say(bob, privateId, 'p2', 'Almost: two items left. I will ping you.')

  if ((await listInbox(app.db, alice!.id, { type: 'GROUP', archived: null, after: null, limit: 1 })).length) return
  const groupId = await createGroup(app, as(alice), {
    title: 'Launch team',
    memberIds: [bob!, carol!, bot!].map((u) => encodeGlobalId('User', u.id)),
    historyVisibility: 'SHARED',
  })
  await say(alice, groupId, 'g1', 'Welcome to the launch team!')
  await say(carol, groupId, 'g2', 'Glad to be here. Docs are in review.')
  await say(bot, groupId, 'g3', 'Reminder: the go/no-go meeting is tomorrow at 10:00.')
}
