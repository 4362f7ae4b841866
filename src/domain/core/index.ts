// The vocabulary every feature shares: the App and Viewer, transactions, errors, global ids, limits, paging.
export type { App, Identity, Viewer } from './app.ts'
export { badInput, DomainError, notFound, retryLater } from './errors.ts'
export {
  decodeGlobalId,
  encodeGlobalId,
  messageGlobalId,
  messageKeyText,
  parseId,
  parseMemberId,
  parseMessageId,
} from './ids.ts'
export type { MessageKey } from './ids.ts'
export { LIMITS } from './limits.ts'
export { DEFAULT_RETRY_SCHEDULE_MS, DEFAULT_SETTINGS, type Settings } from './settings.ts'
