// Threads (docs/threads.md): following, thread read positions, summaries and the followed list.
// Replies themselves are sent by domain/send and paged by domain/history (listReplies).
export { followThread, loadThreadSummary, markThreadRead } from './threads.ts'
export { listThreads } from './list.ts'
export type { ThreadSummaryRecord } from '../../store/threads.ts'
