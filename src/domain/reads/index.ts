// Read state: read positions, unread counts and receipts.
export { listReaders, markConversationRead, receiptOf, receiptsVisible, unreadTotal } from './readState.ts'
export type { Receipt } from './readState.ts'
