import { describe, expect, it } from 'vitest'
import type { MemberAccess } from '../../src/domain/policy/access.ts'
import type { Viewer } from '../../src/domain/core/app.ts'
import * as policy from '../../src/domain/policy/policy.ts'
import type { ConversationType, MemberRole, MessageRecord } from '../../src/store/records.ts'

/**
 * The permission rules as pure functions, without a database: every role against every target
 * role, where the API tests (rules, lifecycle, conversations) check representative cases end to end.
 */

const viewer = (userId: number, isOperator = false): Viewer => ({
  userId,
  handle: `u${userId}`,
  kind: 'HUMAN',
  isOperator,
})

function access(type: ConversationType, role: MemberRole, mutedUntil: Date | null = null): MemberAccess {
  const at = new Date(0)
  return {
    conversation: {
      id: 1,
      type,
      title: 't',
      historyVisibility: 'SHARED',
      postingPolicy: 'EVERYONE',
      lastSeq: 9,
      lastPts: 9,
      lastActivityAt: at,
      createdAt: at,
      retentionSeconds: null,
      retainedFromSeq: 1,
      legalHold: false,
    },
    member: {
      conversationId: 1,
      userId: 1,
      role,
      visibleFromSeq: 1,
      lastReadSeq: 0,
      lastReadAt: null,
      mutedUntil,
      joinedAt: at,
    },
  }
}

const message = (over: Partial<MessageRecord> = {}): MessageRecord => ({
  conversationId: 1,
  seq: 5,
  pts: 5,
  senderType: 'USER',
  senderId: 2,
  kind: 'TEXT',
  clientMessageId: 'c',
  content: { text: 'hi' },
  quotedSeq: null,
  mentionUserIds: [],
  mentionAll: false,
  visibleTo: [],
  status: 'NORMAL',
  sentAt: new Date(0),
  editedAt: null,
  recalledAt: null,
  recalledById: null,
  reactionsPts: null,
  forwardedFrom: null,
  ...over,
})

/** What a rule answers, or the code of the DomainError it throws. */
function outcome<T>(rule: () => T): T | string {
  try {
    return rule()
  } catch (error) {
    return (error as { code?: string }).code ?? 'THREW'
  }
}
/** The code a check throws, or null when it lets the action through. */
const code = (check: () => void): string | null => outcome(check) ?? null

const ROLES: MemberRole[] = ['OWNER', 'ADMIN', 'MEMBER']

describe('one hierarchy: a manager acts on the members below it', () => {
  it('lets removal and mute go down the ranks only', () => {
    const allowed = ROLES.flatMap((actor) =>
      ROLES.filter(
        (target) => code(() => policy.checkActsOn({ role: actor }, { role: target }, 'remove')) === null,
      ).map((target) => `${actor}>${target}`),
    )
    expect(allowed).toEqual(['OWNER>ADMIN', 'OWNER>MEMBER', 'ADMIN>MEMBER'])
    expect(code(() => policy.checkManagesMembers(access('GROUP', 'MEMBER'), 'mute'))).toBe('FORBIDDEN')
    expect(code(() => policy.checkManagesMembers(access('CHANNEL', 'OWNER'), 'remove'))).toBe('BAD_USER_INPUT')
  })

  it('lets a group manager recall its own and lower-ranked members’ messages at any time, senders their own within the window', () => {
    const window = 120
    // null: no window; a number: the window; a string: the error code.
    const recall = (role: MemberRole, senderRole: MemberRole | null, type: ConversationType = 'GROUP', own = false) =>
      outcome(() =>
        policy.recallWindow(viewer(1), access(type, role), message({ senderId: own ? 1 : 2 }), senderRole, window),
      )
    expect(ROLES.map((actor) => ROLES.map((sender) => recall(actor, sender)))).toEqual([
      ['FORBIDDEN', null, null],
      ['FORBIDDEN', 'FORBIDDEN', null],
      ['FORBIDDEN', 'FORBIDDEN', 'FORBIDDEN'],
    ])
    // A sender who left ranks like a plain member.
    expect(recall('ADMIN', null)).toBeNull()
    expect(ROLES.map((role) => recall(role, role, 'GROUP', true))).toEqual([null, null, window])
    // Channels and private conversations have no manager recall: only the sender, within the window.
    expect(recall('OWNER', 'SUBSCRIBER', 'CHANNEL')).toBe('FORBIDDEN')
    expect(recall('OWNER', 'OWNER', 'CHANNEL', true)).toBe(window)
    expect(recall('MEMBER', 'MEMBER', 'PRIVATE')).toBe('FORBIDDEN')
    expect(
      code(() =>
        policy.recallWindow(
          viewer(1),
          access('GROUP', 'OWNER'),
          message({ senderType: 'SYSTEM', senderId: null }),
          null,
          window,
        ),
      ),
    ).toBe('FORBIDDEN')
  })

  it('lets only the owner set roles, and makes OWNER a transfer', () => {
    expect(ROLES.map((role) => code(() => policy.checkSetsRole(access('GROUP', role), 'ADMIN')))).toEqual([
      null,
      'FORBIDDEN',
      'FORBIDDEN',
    ])
    expect(code(() => policy.checkSetsRole(access('GROUP', 'OWNER'), 'SUBSCRIBER'))).toBe('BAD_USER_INPUT')
    expect(code(() => policy.checkSetsRole(access('PRIVATE', 'MEMBER'), 'ADMIN'))).toBe('BAD_USER_INPUT')
    expect([
      policy.roleChange({ role: 'ADMIN' }, 'ADMIN'),
      policy.roleChange({ role: 'MEMBER' }, 'ADMIN'),
      policy.roleChange({ role: 'ADMIN' }, 'OWNER'),
    ]).toEqual(['none', 'change', 'transfer'])
  })

  it('pins (issue 16): a group or channel manager, either member of a private conversation', () => {
    const pins = (type: ConversationType, role: MemberRole, m = message()) =>
      code(() => policy.checkPins(access(type, role), m))
    expect(ROLES.map((role) => pins('GROUP', role))).toEqual([null, null, 'FORBIDDEN'])
    expect(pins('CHANNEL', 'SUBSCRIBER')).toBe('FORBIDDEN')
    expect(pins('PRIVATE', 'MEMBER')).toBeNull()
    // Never a system notice or a recalled message; the role is checked first.
    expect(pins('GROUP', 'OWNER', message({ senderType: 'SYSTEM', senderId: null, kind: 'SYSTEM' }))).toBe(
      'BAD_USER_INPUT',
    )
    expect(pins('PRIVATE', 'MEMBER', message({ status: 'RECALLED' }))).toBe('MESSAGE_RECALLED')
    expect(pins('GROUP', 'MEMBER', message({ status: 'RECALLED' }))).toBe('FORBIDDEN')
  })

  it('reacts (issue 16): anyone who sees the message, not once it is recalled', () => {
    expect(code(() => policy.checkReacts(message()))).toBeNull()
    expect(code(() => policy.checkReacts(message({ status: 'RECALLED' })))).toBe('MESSAGE_RECALLED')
  })
})

describe('sending', () => {
  const now = new Date(1_000_000)
  const send = (a: MemberAccess, opts: { mentionAll?: boolean; blockedByPeer?: boolean; operator?: boolean } = {}) =>
    code(() =>
      policy.checkSender(viewer(1, opts.operator), a, {
        mentionAll: opts.mentionAll ?? false,
        now,
        blockedByPeer: opts.blockedByPeer ?? false,
      }),
    )

  it('applies channel posting, mute (until a time, not at it), block and @all in that order', () => {
    expect(send(access('CHANNEL', 'SUBSCRIBER'))).toBe('FORBIDDEN')
    expect(send(access('CHANNEL', 'SUBSCRIBER'), { operator: true })).toBeNull()
    expect(send(access('GROUP', 'MEMBER', new Date(now.getTime() + 1)))).toBe('SENDER_MUTED')
    expect(send(access('GROUP', 'MEMBER', now))).toBeNull()
    expect(policy.isMuted({ mutedUntil: new Date(now.getTime() + 1) }, now)).toBe(true)
    expect(send(access('PRIVATE', 'MEMBER'), { blockedByPeer: true })).toBe('BLOCKED')
    expect(send(access('GROUP', 'MEMBER'), { mentionAll: true })).toBe('FORBIDDEN')
    expect(send(access('GROUP', 'ADMIN'), { mentionAll: true })).toBeNull()
  })

  it('PRIVATE_CHAT_POLICY (issue 46): friends only under `friends`, operators and agents on either side exempt', () => {
    const chat = (
      policyValue: 'open' | 'friends',
      peer: { kind: 'HUMAN' | 'AGENT'; friends: boolean },
      who: Viewer = viewer(1),
    ) => code(() => policy.checkPrivateChat(policyValue, who, peer))
    const stranger = { kind: 'HUMAN' as const, friends: false }
    expect(chat('open', stranger)).toBeNull()
    expect(chat('friends', stranger)).toBe('NOT_FRIENDS')
    expect(chat('friends', { kind: 'HUMAN', friends: true })).toBeNull()
    expect(chat('friends', stranger, viewer(1, true))).toBeNull()
    expect(chat('friends', stranger, { ...viewer(1), kind: 'AGENT' })).toBeNull()
    expect(chat('friends', { kind: 'AGENT', friends: false })).toBeNull()
  })
})

describe('what a recall hides', () => {
  it('hides content, edits and the viewer’s marks except delete-for-me, and refuses what would use it', () => {
    const recalled = message({ status: 'RECALLED' })
    expect([policy.shownContent(recalled), policy.shownEdits(recalled, [1, 2])]).toEqual([null, []])
    expect(policy.shownViewerState(recalled, { favorite: true, deletedForMe: true, remindAt: new Date() })).toEqual({
      favorite: false,
      deletedForMe: true,
      remindAt: null,
    })
    expect([policy.shownContent(message()), policy.shownEdits(message(), [1])]).toEqual([{ text: 'hi' }, [1]])
    expect(code(() => policy.refuseRecalled(recalled, 'quoted'))).toBe('MESSAGE_RECALLED')
    expect(code(() => policy.checkEdit(viewer(2), recalled, 'TEXT'))).toBe('MESSAGE_RECALLED')
  })
})

describe('editing', () => {
  it('lets the sender edit their own TEXT, never a copy of someone else’s message', () => {
    expect(code(() => policy.checkEdit(viewer(2), message(), 'TEXT'))).toBeNull()
    expect(code(() => policy.checkEdit(viewer(1), message(), 'TEXT'))).toBe('FORBIDDEN')
    const copy = message({
      forwardedFrom: { senderName: 'Alice', sentAt: new Date(0).toISOString(), conversationTitle: null },
    })
    expect(code(() => policy.checkEdit(viewer(2), copy, 'TEXT'))).toBe('NOT_EDITABLE')
  })
})
