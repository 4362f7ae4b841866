import { describe, expect, it } from 'vitest'
import { kindOf } from '../../src/domain/live/payloads.ts'
import { alertRule } from '../../src/domain/live/alertRule.ts'
import { conversationVerdict, mayConcern, userTopicVerdict } from '../../src/domain/live/rules.ts'
import type { WaveReads } from '../../src/domain/live/wave.ts'
import type { MessageEventKind, RealtimeEvent } from '../../src/realtime/events.ts'
import type { DeliveryMember } from '../../src/store/delivery.ts'
import type { ConversationRecord, MessageRecord } from '../../src/store/records.ts'

/** What one viewer receives from one event, as pure rules (the subscription tests run them end to end). */

const VIEWER = 7
const message = (pts: number): Extract<RealtimeEvent, { type: 'message' }> => ({
  type: 'message',
  kind: 'ADDED',
  conversationId: 1,
  seq: pts,
  pts,
})
const read = (userId: number, receiptsVisible: boolean): Extract<RealtimeEvent, { type: 'read' }> => ({
  type: 'read',
  conversationId: 1,
  userId,
  lastReadSeq: 3,
  receiptsVisible,
})
const typing = (userId: number): Extract<RealtimeEvent, { type: 'typing' }> => ({
  type: 'typing',
  conversationId: 1,
  userId,
  expiresAt: '',
})

describe('before the shared reads', () => {
  it('skips what the subscription already delivered, its own typing and reads, and receipts that are off', () => {
    expect([4, 5, 6].map((pts) => mayConcern(message(pts), VIEWER, 5))).toEqual([false, false, true])
    expect(mayConcern(message(9), VIEWER, undefined)).toBe(false)
    expect([
      mayConcern(read(8, true), VIEWER, 0),
      mayConcern(read(8, false), VIEWER, 0),
      mayConcern(read(VIEWER, true), VIEWER, 0),
    ]).toEqual([true, false, false])
    expect([mayConcern(typing(8), VIEWER, 0), mayConcern(typing(VIEWER), VIEWER, 0)]).toEqual([true, false])
  })
})

describe('message event kinds', () => {
  it('are delivered alike: a reaction change reaches exactly whom a send of that message reaches', () => {
    const kinds = ['ADDED', 'EDITED', 'RECALLED', 'REACTIONS_CHANGED'] as const
    const verdicts = kinds.map((kind) => [4, 6].map((pts) => mayConcern({ ...message(pts), kind }, VIEWER, 5)))
    expect(new Set(verdicts.map((v) => JSON.stringify(v)))).toEqual(new Set([JSON.stringify([false, true])]))
  })

  it('are named from the stored row on replay: recalled, then a reaction change, then edited, else added', () => {
    const rows = [
      { status: 'RECALLED', edited: true, reacted: true },
      { status: 'EDITED', edited: true, reacted: true },
      { status: 'EDITED', edited: true, reacted: false },
      { status: 'NORMAL', edited: false, reacted: true },
      { status: 'NORMAL', edited: false, reacted: false },
    ] as const
    expect(rows.map(kindOf)).toEqual(['RECALLED', 'REACTIONS_CHANGED', 'EDITED', 'REACTIONS_CHANGED', 'ADDED'])
  })
})

describe('with the shared reads', () => {
  const rows = { message: {} as MessageRecord, conversation: {} as ConversationRecord }
  const reads = (sees: boolean): [DeliveryMember, WaveReads] => {
    const member = { member: {} as DeliveryMember['member'], sees, doNotDisturbUntil: null, followsThread: false }
    return [member, { members: new Map([[VIEWER, member]]), ...rows }]
  }

  it('ends on lost access, hides a message the viewer may not see, delivers the rest', () => {
    const [seen, visible] = reads(true)
    const [unseen, hidden] = reads(false)
    expect(conversationVerdict(message(1), undefined, visible)).toBe('lostAccess')
    expect(conversationVerdict(message(1), unseen, hidden)).toBe('hidden')
    expect(conversationVerdict(message(1), seen, { ...visible, message: null })).toBe('hidden')
    expect(conversationVerdict(message(1), seen, visible)).toBe('deliver')
    expect(conversationVerdict(typing(8), unseen, hidden)).toBe('deliver')
  })
})

describe('the viewer’s own topic', () => {
  const events: RealtimeEvent[] = [
    read(VIEWER, false),
    { type: 'removed', conversationId: 1, userId: VIEWER },
    { type: 'joined', conversationId: 1, userId: VIEWER },
    { type: 'reminderDue', conversationId: 1, seq: 1, userId: VIEWER, remindAt: '' },
    { type: 'messageAction', conversationId: 1, seq: 1, userId: VIEWER },
    { type: 'conversationUpdated', conversationId: 1, userId: VIEWER },
    { type: 'friendship', userId: VIEWER, peerId: 2 },
  ]

  it('gives the inbox everything, a conversation stream its own conversation’s reads and removal', () => {
    expect(events.map((e) => userTopicVerdict(e, 'inbox'))).toEqual([
      'deliver',
      'leave',
      'join',
      'deliver',
      'deliver',
      'deliver',
      'deliver',
    ])
    expect(events.map((e) => userTopicVerdict(e, { conversationId: 1 }))).toEqual([
      'deliver',
      'lostAccess',
      'skip',
      'skip',
      'skip',
      'skip',
      'skip',
    ])
    expect(events.map((e) => userTopicVerdict(e, { conversationId: 2 }))).toEqual([
      'skip',
      'skip',
      'skip',
      'skip',
      'skip',
      'skip',
      'skip',
    ])
  })

  it('has the account stream follow joins and removals like the inbox, and read the viewer’s own state from the sync difference', () => {
    expect(events.map((e) => userTopicVerdict(e, 'account'))).toEqual([
      'sync',
      'leave',
      'join',
      'deliver',
      'sync',
      'sync',
      'sync',
    ])
  })
})

describe('MessageEvent.alert', () => {
  const NOW = new Date('2026-06-01T00:00:00Z')
  const LATER = new Date('2026-06-02T00:00:00Z')
  const EARLIER = new Date('2026-05-31T00:00:00Z')
  const by = (senderId: number | null, extra: Partial<MessageRecord> = {}) =>
    ({
      senderType: senderId === null ? 'SYSTEM' : 'USER',
      senderId,
      seq: 10,
      mentionUserIds: [],
      mentionAll: false,
      visibleTo: [],
      inConversation: true,
      ...extra,
    }) as MessageRecord

  it('rings for others’ additions outside do-not-disturb, and for mentions and @all inside it', () => {
    const cases: [MessageEventKind, MessageRecord, Date | null, boolean][] = [
      ['ADDED', by(8), null, true],
      ['ADDED', by(8), EARLIER, true], // do-not-disturb that has ended
      ['ADDED', by(8), LATER, false],
      ['ADDED', by(8, { mentionUserIds: [VIEWER] }), LATER, true],
      ['ADDED', by(8, { mentionAll: true }), LATER, true],
      ['ADDED', by(8, { mentionUserIds: [9] }), LATER, false],
      ['ADDED', by(8, { visibleTo: [9] }), null, false],
      ['ADDED', by(8, { visibleTo: [VIEWER] }), null, true],
      ['ADDED', by(VIEWER, { mentionUserIds: [VIEWER] }), null, false],
      ['ADDED', by(null, { kind: 'SYSTEM' }), null, false], // Parley's notices and a host's events
      ['ADDED', by(null, { kind: 'TEXT' }), null, true], // a host's text posted as SYSTEM (postSystemMessage)
      ['EDITED', by(8), null, false],
      ['RECALLED', by(8, { mentionAll: true }), null, false],
      ['REACTIONS_CHANGED', by(8, { mentionUserIds: [VIEWER] }), null, false],
      ['ADDED', by(8, { seq: 3, mentionUserIds: [VIEWER] }), null, false], // before the viewer's JOINED window
    ]
    const member = (doNotDisturbUntil: Date | null) => ({ userId: VIEWER, visibleFromSeq: 5, doNotDisturbUntil })
    expect(cases.map(([kind, m, until]) => alertRule.alerts(kind, m, member(until), NOW))).toEqual(
      cases.map((c) => c[3]),
    )
  })

  it('rings for a reply outside the conversation only for followers and the mentioned', () => {
    const reply = (extra: Partial<MessageRecord> = {}) => by(8, { threadRootSeq: 1, inConversation: false, ...extra })
    const cases: [MessageRecord, Date | null, boolean, boolean][] = [
      [reply(), null, false, false],
      [reply(), null, true, true],
      [reply(), LATER, true, false], // a follower in do-not-disturb
      [reply({ mentionUserIds: [VIEWER] }), LATER, false, true],
      [reply({ mentionAll: true }), null, false, true],
      [reply({ inConversation: true }), null, false, true], // sent alsoInConversation
      [reply({ visibleTo: [9] }), null, true, false],
    ]
    expect(
      cases.map(([m, until, follows]) =>
        alertRule.alerts(
          'ADDED',
          m,
          { userId: VIEWER, visibleFromSeq: 1, doNotDisturbUntil: until, followsThread: follows },
          NOW,
        ),
      ),
    ).toEqual(cases.map((c) => c[3]))
  })
})
