import { AsyncLocalStorage } from 'node:async_hooks'
import { randomUUID } from 'node:crypto'
import type { YogaLogger } from 'graphql-yoga'
import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino'

export type { Logger }

/** The request (HTTP) or connection (WebSocket) the running code serves, for log lines deep inside it. */
const current = new AsyncLocalStorage<{ requestId: string }>()

/** An incoming x-request-id when it is a sane token (a proxy's), else a fresh one. */
export function requestIdFrom(header: string | string[] | undefined): string {
  const value = Array.isArray(header) ? header[0] : header
  return value && /^[\w.:-]{1,128}$/.test(value) ? value : newRequestId()
}

/**
 * A fresh id as one flat string: randomUUID's text is a tree of some 30 concatenated pieces (about
 * 1 KiB), which a WebSocket's id would keep for the socket's life.
 */
const newRequestId = (): string => Buffer.from(randomUUID(), 'latin1').toString('latin1')

export function withRequestId<T>(requestId: string, work: () => T): T {
  return current.run({ requestId }, work)
}

export const currentRequestId = (): string | undefined => current.getStore()?.requestId

/**
 * JSON lines on stdout, one object per event, with the request id when there is one. Fields that
 * could carry a token or message text are redacted whatever the level.
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options: LoggerOptions = {
    level,
    base: { service: 'parley' },
    redact: ['authorization', 'token', '*.authorization', '*.token', '*.text', 'variables'],
    mixin: () => {
      const requestId = currentRequestId()
      return requestId ? { requestId } : {}
    },
  }
  return destination ? pino(options, destination) : pino(options)
}

/** Yoga's logger interface over pino: `logger.error(message, error)` becomes one line with `err`. */
export function yogaLogger(logger: Logger): YogaLogger {
  const level =
    (name: 'debug' | 'info' | 'warn' | 'error') =>
    (...args: unknown[]) => {
      const [first, ...rest] = args
      const error = rest.find((a) => a instanceof Error) ?? (first instanceof Error ? first : undefined)
      const message = typeof first === 'string' ? first : error ? error.message : 'yoga'
      if (error) logger[name]({ err: error }, message)
      else logger[name](message)
    }
  return { debug: level('debug'), info: level('info'), warn: level('warn'), error: level('error') }
}
