import type { Db } from '../../db/client.ts'
import { DomainError } from '../core/errors.ts'
import { messageKeyText, type MessageKey } from '../core/ids.ts'
import type { ConversationAccess } from '../../store/conversations.ts'
import {
  CONVERSATION_CHANGE,
  FRIENDSHIP_CHANGE,
  MEMBERSHIP_CHANGE,
  MESSAGE_STATE_CHANGE,
  THREAD_STATE_CHANGE,
  readSnapshot,
  rangeAfter,
  type Snapshot,
  type SyncChange,
  type SyncKey,
  type SyncRange,
} from '../../store/sync.ts'
import { readSyncDifference } from '../../store/syncDifference.ts'
import { threadStateOf } from '../../store/syncThreads.ts'
import { NO_ACTIONS, type ViewerState } from '../../store/userActions.ts'
import { readerOf, type App, type Viewer } from '../core/app.ts'
import { syncBatchSize } from '../core/input.ts'
import { shownViewerState } from '../policy/policy.ts'
import { decodeSyncToken, syncTokenEncoder, tokenAt } from './syncToken.ts'

/**
 * Account-level sync (docs/sync.md, decision 0080): the viewer's changes after a token, read in one
 * statement so the rows and the snapshot the next token names are the same state (decision 0160).
 */

type MessageState = { key: MessageKey; state: ViewerState }
/** The viewer's state of the thread of `root` (docs/threads.md). */
export type ThreadState = { root: MessageKey; following: boolean; lastReadSeq: number }

/** A difference read at `snapshot`: its changes in order, with the rows they name as of that snapshot. */
export type Difference = {
  snapshot: Snapshot
  changes: SyncChange[]
  hasMore: boolean
  /** The conversations the changes joined or changed, and the messages whose state changed, each once in order. */
  conversationIds: number[]
  keys: MessageKey[]
  conversations: Map<number, ConversationAccess>
  states: Map<string, ViewerState>
  /** The last_pts at `snapshot` of the conversations asked for (readDifference's `heads`). */
  heads: Map<number, number>
}

export type SyncBatch = {
  token: string
  hasMore: boolean
  conversations: ConversationAccess[]
  removedConversationIds: number[]
  messageStates: MessageState[]
  threadStates: ThreadState[]
}

export const isConversationChange = (change: SyncChange): boolean =>
  change.kind === CONVERSATION_CHANGE || (change.kind === MEMBERSHIP_CHANGE && !change.left)
export const isRemoval = (change: SyncChange): boolean => change.kind === MEMBERSHIP_CHANGE && change.left
export const isStateChange = (change: SyncChange): boolean => change.kind === MESSAGE_STATE_CHANGE
/** The viewer's friendship with the user `conversationId` names; `action` is the state. Query.sync's batch has no field for it: viewerUpdates delivers it. */
export const isFriendshipChange = (change: SyncChange): boolean => change.kind === FRIENDSHIP_CHANGE
export const isThreadChange = (change: SyncChange): boolean => change.kind === THREAD_STATE_CHANGE
/** A thread change's state, as of the difference's snapshot. */
export const threadStateIn = (change: SyncChange): ThreadState => ({
  root: { conversationId: change.conversationId, seq: change.seq },
  ...threadStateOf(change.action),
})

export async function currentSyncToken(app: App, viewer: Viewer): Promise<string> {
  return tokenAt(viewer.userId, (await readSnapshot(app.db, null)).snapshot)
}

export async function readDifference(
  db: Db,
  viewer: Viewer,
  range: SyncRange,
  limit: number,
  heads: readonly number[] = [],
): Promise<Difference> {
  const {
    snapshot,
    ahead,
    changes: found,
    heads: lastPts,
  } = await readSyncDifference(db, viewer.userId, range, limit + 1, heads)
  if (ahead)
    throw new DomainError(
      'RESYNC_REQUIRED',
      'this sync token is from another database state; refetch, then take a new Viewer.syncToken',
    )
  const changes = found.slice(0, limit)
  const conversations = new Map<number, ConversationAccess>()
  const states = new Map<string, ViewerState>()
  for (const change of changes) {
    if (change.access?.member) conversations.set(change.conversationId, change.access)
    if (change.state) {
      const stored = change.state.stored ?? NO_ACTIONS
      // A message deleted for the viewer is invisible to them, but its state still goes to their devices.
      const status = change.state.visibleStatus
      states.set(messageKeyText(change), status ? shownViewerState({ status }, stored) : stored)
    }
  }
  const conversationIds = [...new Set(changes.filter(isConversationChange).map((c) => c.conversationId))]
  return {
    snapshot,
    changes,
    hasMore: found.length > limit,
    conversationIds,
    keys: uniqueKeys(changes.filter(isStateChange)),
    conversations,
    states,
    heads: lastPts,
  }
}

function uniqueKeys(changes: readonly SyncChange[]): MessageKey[] {
  const keys = new Map(changes.map((c) => [messageKeyText(c), { conversationId: c.conversationId, seq: c.seq }]))
  return [...keys.values()]
}

/** The token after the difference's change at each index: the snapshot itself once nothing is left. */
export function tokensAfter(userId: number, range: SyncRange, diff: Difference): (index: number) => string {
  // Two bodies at most (rangeAfter: a change of the first part, a late one), each serialized once.
  const encoders = new Map<boolean, (after: SyncKey | null) => string>()
  return (index) => {
    if (index === diff.changes.length - 1 && !diff.hasMore) return tokenAt(userId, diff.snapshot)
    const change = diff.changes[index]!
    const next = rangeAfter(range, diff.snapshot, change)
    let encode = encoders.get(change.late)
    if (!encode) encoders.set(change.late, (encode = syncTokenEncoder(userId, next)))
    return encode(next.after)
  }
}

/** Query.sync: one batch of the difference after `since`, each conversation and message once. */
export async function sync(
  app: App,
  viewer: Viewer,
  since: string,
  first: number | null | undefined,
): Promise<SyncBatch> {
  const limit = syncBatchSize(first, 'first')
  const { range } = decodeSyncToken(since, viewer.userId, 'since')
  const reader = readerOf(app, viewer)
  const diff = await readDifference(reader, viewer, range, limit).catch((error: unknown) => {
    // A token taken on the primary, or on a replica further ahead, is ahead of this replica: the primary has it.
    if (reader === app.db || !(error instanceof DomainError && error.extensions.code === 'RESYNC_REQUIRED')) throw error
    return readDifference(app.db, viewer, range, limit)
  })
  if (!diff.changes.length)
    return {
      token: since,
      hasMore: false,
      conversations: [],
      removedConversationIds: [],
      messageStates: [],
      threadStates: [],
    }
  return {
    token: tokensAfter(viewer.userId, range, diff)(diff.changes.length - 1),
    hasMore: diff.hasMore,
    conversations: diff.conversationIds.flatMap((id) => diff.conversations.get(id) ?? []),
    removedConversationIds: [...new Set(diff.changes.filter(isRemoval).map((c) => c.conversationId))],
    messageStates: diff.keys.map((key) => ({ key, state: diff.states.get(messageKeyText(key))! })),
    // Each thread once, in its latest state of the batch.
    threadStates: [
      ...new Map(
        diff.changes.filter(isThreadChange).map((c) => [messageKeyText(c), threadStateIn(c)] as const),
      ).values(),
    ],
  }
}
