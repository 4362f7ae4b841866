// Reading: history pages, the inbox, the change feed, and the per-request loaders every read goes through.
export { listConversationChanges } from './changes.ts'
export type { ChangeBatch } from './changes.ts'
export { listMessages, listMessagesAround, listReplies, prefetchMessages, seqCursor } from './history.ts'
export type { PageFields } from './history.ts'
export { findConversationMember, listConversationMembers, listConversations } from './inbox.ts'
export { createLoaders, loadExisting, loadUser } from './loaders.ts'
export type { Loaders } from './loaders.ts'
