import { newUsers, type TestUser } from './harness.ts'
import { AddMembers, createGroup, SendMessage } from './operations.ts'

/**
 * The visibility matrix every read path is tested against (test/history/visibility.test.ts, and search in
 * test/search/search-visibility.test.ts): a JOINED group, a late member, directed messages, quotes and a
 * forward. A change to the rule changes `visible` here, and every path's test follows it.
 */

let counter = 0
export async function sendAs(
  user: TestUser,
  conversationId: string,
  text: string,
  extra: { visibleTo?: TestUser[]; quoted?: string; forward?: string[] } = {},
) {
  const content = extra.forward ? { forward: { messageIds: extra.forward } } : { text: { text } }
  const input = {
    conversationId,
    clientMessageId: `vis-${process.pid}-${++counter}`,
    content,
    visibleToUserIds: extra.visibleTo?.map((u) => u.id),
    quotedMessageId: extra.quoted,
  }
  return (await user.run(SendMessage, { input })).sendMessage.message
}

export async function buildVisibilityMatrix() {
  const [alice, bob, carol] = (await newUsers(3)) as [TestUser, TestUser, TestUser]
  const group = await createGroup(alice, [bob], 'JOINED') //                         seq 1: CONVERSATION_CREATED
  const before = await sendAs(alice, group.id, 'before carol') //                    seq 2
  const forBob = await sendAs(alice, group.id, 'for bob', { visibleTo: [bob] }) //   seq 3: directed to bob
  await alice.run(AddMembers, { conversationId: group.id, userIds: [carol.id] }) //              seq 4: MEMBERS_ADDED, carol sees from here
  await sendAs(bob, group.id, 'after carol', { quoted: before.id }) //               seq 5: quotes 2
  const forCarol = await sendAs(alice, group.id, 'for carol', { visibleTo: [carol], quoted: forBob.id }) // seq 6: quotes 3
  await sendAs(bob, group.id, '', { forward: [before.id, forBob.id] }) //            seq 7: bob forwards 2 and 3
  await sendAs(carol, group.id, 'reply', { quoted: forCarol.id }) //                 seq 8: quotes 6
  await sendAs(alice, group.id, 'last for bob', { visibleTo: [bob] }) //             seq 9: directed to bob
  return {
    alice,
    bob,
    carol,
    group,
    lastSeq: 9,
    /** The seqs each member may see. */
    visible: new Map<TestUser, number[]>([
      [alice, [1, 2, 3, 4, 5, 6, 7, 8, 9]],
      [bob, [1, 2, 3, 4, 5, 7, 8, 9]],
      [carol, [4, 5, 6, 7, 8]],
    ]),
    /** Which seq quotes which. */
    quotes: { 5: 2, 6: 3, 8: 6 } as Record<number, number>,
    /** The searchable text of each user message (the forward's is its items' text). */
    texts: {
      2: 'before carol',
      3: 'for bob',
      5: 'after carol',
      6: 'for carol',
      7: 'before carol\nfor bob',
      8: 'reply',
      9: 'last for bob',
    } as Record<number, string>,
  }
}
