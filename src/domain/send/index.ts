// Sending: input checks, the per-send rules under the conversation lock, coalesced batches, content and system messages.
export { createSendQueues } from './queue.ts'
export type { SendApp } from './queue.ts'
export { sendMessage } from './sendMessage.ts'
export type { SystemContentRecord } from './systemMessages.ts'
export { renderSystemText } from './systemText.ts'
export { loadSensitiveWords } from './wordFilter.ts'
export type { MentionRangeRecord } from './references.ts'
export { postSystemMessage } from './postSystem.ts'
