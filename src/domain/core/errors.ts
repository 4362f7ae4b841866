import { GraphQLError } from 'graphql'

/** The stable error codes of the contract (api.graphql); clients switch on `extensions.code`. */
export type ErrorCode =
  | 'UNAUTHENTICATED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'BAD_USER_INPUT'
  | 'RECALL_WINDOW_EXPIRED'
  | 'MESSAGE_RECALLED'
  | 'NOT_EDITABLE'
  | 'SENDER_MUTED'
  | 'BLOCKED'
  | 'CONTENT_REJECTED'
  | 'RATE_LIMITED'
  | 'RESYNC_REQUIRED'
  | 'LIMIT_REACHED'
  | 'UNAVAILABLE'
  | 'NOT_FRIENDS'

/** An expected failure: passes the error mask unchanged, so the client sees message and code. */
export class DomainError extends GraphQLError {
  readonly code: ErrorCode
  constructor(code: ErrorCode, message: string, extra: Record<string, unknown> = {}) {
    super(message, { extensions: { code, ...extra } })
    this.code = code
  }
}

export const notFound = (what: string) => new DomainError('NOT_FOUND', `${what} not found`)
export const badInput = (message: string, field?: string) =>
  new DomainError('BAD_USER_INPUT', message, field ? { field } : {})
export const limitReached = (message: string, limit: number) => new DomainError('LIMIT_REACHED', message, { limit })
export const forbidden = (message: string) => new DomainError('FORBIDDEN', message)

/** A refusal that passes if repeated after `retryAfterMs` (RATE_LIMITED, UNAVAILABLE): clients wait that long, then retry. */
export const retryLater = (code: ErrorCode, message: string, retryAfterMs: number) =>
  new DomainError(code, message, { retryAfterMs })
