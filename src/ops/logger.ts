import { randomUUID } from 'node:crypto'
import type { YogaLogger } from 'graphql-yoga'
import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino'

export type { Logger }

/**
 * The request (HTTP) or connection (WebSocket) an error was thrown in, for the "unexpected error"
 * line the error mask writes later. Carried on the error, not in AsyncLocalStorage: its promise
 * hooks cost every promise on Node 20, about a tenth of the server CPU of a history page.
 */
const requestOfError = new WeakMap<object, string>()

export function tagWithRequest(error: unknown, requestId: string | undefined): void {
  if (requestId && typeof error === 'object' && error !== null && !requestOfError.has(error))
    requestOfError.set(error, requestId)
}

/** The request id of an error or of the error a GraphQLError wraps. */
export function requestIdOf(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined
  const original = (error as { originalError?: unknown }).originalError
  return (
    requestOfError.get(error) ??
    (typeof original === 'object' && original !== null ? requestOfError.get(original) : undefined)
  )
}

/** An incoming x-request-id when it is a sane token (a proxy's), else a fresh one. */
export function requestIdFrom(header: string | string[] | undefined): string {
  const value = Array.isArray(header) ? header[0] : header
  return value && /^[\w.:-]{1,128}$/.test(value) ? value : randomUUID()
}

/**
 * A WebSocket's id, as one flat string: randomUUID's text is a tree of some 30 concatenated pieces
 * (about 1 KiB), which the socket would keep for its life. An HTTP request's id lives as long as
 * the request, so it is not copied (the copy was about 1 % of the CPU of a `{ __typename }`).
 */
export const connectionIdFrom = (header: string | string[] | undefined): string =>
  Buffer.from(requestIdFrom(header), 'latin1').toString('latin1')

/**
 * JSON lines on stdout, one object per event. Fields that could carry a token or message text are
 * redacted whatever the level.
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options: LoggerOptions = {
    level,
    base: { service: 'parley' },
    redact: ['authorization', 'token', '*.authorization', '*.token', '*.text', 'variables'],
  }
  return destination ? pino(options, destination) : pino(options)
}

/**
 * Yoga's logger interface over pino: `logger.error(message, error)` becomes one line with `err`,
 * and a plain object among the arguments (`{ requestId }`) adds its fields.
 */
export function yogaLogger(logger: Logger): YogaLogger {
  const level =
    (name: 'debug' | 'info' | 'warn' | 'error') =>
    (...args: unknown[]) => {
      const [first, ...rest] = args
      const error = rest.find((a) => a instanceof Error) ?? (first instanceof Error ? first : undefined)
      const message = typeof first === 'string' ? first : error ? error.message : 'yoga'
      const fields = rest.find(
        (a): a is Record<string, unknown> => typeof a === 'object' && a !== null && !(a instanceof Error),
      )
      logger[name]({ ...fields, ...(error && { err: error }) }, message)
    }
  return { debug: level('debug'), info: level('info'), warn: level('warn'), error: level('error') }
}
